package fxrates

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// recorded is the daily feed fixture (commerce/fxrates/testdata/README.md).
func recorded(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/eurofxref-daily-2024-12-31.xml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jan2 is a moment the fixture's day is fresh at.
var jan2 = time.Date(2025, 1, 2, 9, 0, 0, 0, time.UTC)

func TestParseRecordedFeed(t *testing.T) {
	days, err := Parse([]byte(recorded(t)), jan2)
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].DateString() != "2024-12-31" || len(days[0].Rates) != 25 ||
		days[0].Rates["USD"] != "1.0389" || days[0].Rates["JPY"] != "163.06" {
		t.Fatalf("%+v", days)
	}
	// Several days (the 90-day feed's layout) come back oldest first.
	two := strings.Replace(recorded(t), "\t</Cube>\n</gesmes", "\t\t<Cube time='2025-01-02'><Cube currency='USD' rate='1.0350'/><Cube currency='GBP' rate='0.8290'/></Cube>\n\t</Cube>\n</gesmes", 1)
	days, err = Parse([]byte(two), jan2)
	if err != nil || len(days) != 2 || days[1].DateString() != "2025-01-02" || days[1].Rates["USD"] != "1.0350" {
		t.Fatalf("two days: %v %+v", err, days)
	}
}

// Hostile or broken feeds are refused as ErrMalformed, whatever they try.
func TestParseRefusesHostileFeeds(t *testing.T) {
	good := recorded(t)
	swap := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	cases := map[string]string{
		"not XML":             "<html><body>Service unavailable</body></html>",
		"JSON":                `{"rates":{"USD":1.03}}`,
		"truncated":           good[:len(good)/2],
		"empty":               "",
		"negative rate":       swap("rate='1.0389'", "rate='-1.0389'"),
		"zero rate":           swap("rate='1.0389'", "rate='0'"),
		"zero decimals":       swap("rate='1.0389'", "rate='0.0000'"),
		"exponent":            swap("rate='1.0389'", "rate='1e3'"),
		"NaN":                 swap("rate='1.0389'", "rate='NaN'"),
		"spaces":              swap("rate='1.0389'", "rate=' 1.0389'"),
		"huge number":         swap("rate='1.0389'", "rate='"+strings.Repeat("9", 40)+"'"),
		"bad currency":        swap("currency='USD'", "currency='US$'"),
		"lower-case currency": swap("currency='USD'", "currency='usd'"),
		"EUR quoted":          swap("currency='JPY'", "currency='EUR'"),
		"currency twice":      swap("currency='JPY'", "currency='USD'"),
		"USD missing":         swap("<Cube currency='USD' rate='1.0389'/>", ""),
		"no day":              swap("<Cube time='2024-12-31'>", "<Cube>"),
		"bad date":            swap("time='2024-12-31'", "time='31.12.2024'"),
		"future date":         swap("time='2024-12-31'", "time='2025-03-01'"),
		"other sender":        swap("European Central Bank", "Totally Real Rates Ltd"),
		"other subject":       swap("Reference rates", "Special offer"),
		"no namespace":        swap(`xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"`, ""),
		"other encoding":      swap(`encoding="UTF-8"`, `encoding="ISO-8859-1"`),
		"entity expansion": strings.Replace(good, "<gesmes:Envelope",
			`<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><gesmes:Envelope`, 1) + "&lol2;",
		"external entity": strings.Replace(swap("rate='1.0389'", "rate='&xxe;'"), "<gesmes:Envelope",
			`<!DOCTYPE e [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><gesmes:Envelope`, 1),
		"body over the limit": strings.Replace(good, "<Cube>", "<Cube>"+strings.Repeat("<!-- padding -->", MaxFeedBytes/16+1), 1),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			days, err := Parse([]byte(body), jan2)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("accepted (%v): %+v", err, days)
			}
		})
	}
}

func TestFetchRefusesWhatIsNotTheFeed(t *testing.T) {
	good := recorded(t)
	serve := func(status int, ctype, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ctype != "" {
				w.Header().Set("Content-Type", ctype)
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/stats/eurofxref/eurofxref-daily.xml"
	}
	ctx := context.Background()
	f, err := Fetcher{URL: serve(200, "text/xml", good) + "?key=secret"}.Fetch(ctx, jan2)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Days) != 1 || strings.Contains(f.Source, "secret") || !strings.HasSuffix(f.Source, "/eurofxref-daily.xml") {
		t.Fatalf("%+v", f)
	}
	for name, c := range map[string]struct {
		url  string
		want error
	}{
		"HTML page":        {serve(200, "text/html; charset=utf-8", good), ErrMalformed},
		"octet stream":     {serve(200, "application/octet-stream", good), ErrMalformed},
		"server error":     {serve(500, "text/xml", good), ErrUnavailable},
		"not found":        {serve(404, "text/xml", ""), ErrUnavailable},
		"huge body":        {serve(200, "application/xml", good+strings.Repeat(" ", MaxFeedBytes)), ErrMalformed},
		"malformed":        {serve(200, "text/xml", "<gesmes:Envelope"), ErrMalformed},
		"nobody listening": {"http://127.0.0.1:1/eurofxref-daily.xml", ErrUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := (Fetcher{URL: c.url, Timeout: 5 * time.Second}).Fetch(ctx, jan2); !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		})
	}
	for _, u := range []string{"file:///etc/passwd", "", "gopher://127.0.0.1:70/"} {
		if _, err := (Fetcher{URL: u}).Fetch(ctx, jan2); !errors.Is(err, ErrNotConfigured) {
			t.Fatalf("%q: %v", u, err)
		}
	}
}
