package fxrates

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// fetchServed serves body as the ECB does and fetches it.
func fetchServed(t *testing.T, body string) (Feed, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	return Fetcher{URL: srv.URL + "/stats/eurofxref/eurofxref-daily.xml"}.Fetch(context.Background(), jan2)
}

func countDays(t *testing.T, s PGStore) int {
	t.Helper()
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM fx_rate_days`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Fetch → store: the recorded feed's day is stored with its date, source
// and digest; reading it again is a no-op; a feed that rewrites a stored
// day, or any malformed feed, stores nothing. The runtime role may not
// rewrite a stored day.
func TestStoreKeepsEachDayOnce(t *testing.T) {
	ctx := context.Background()
	s := PGStore{Pool: testenv.Postgres(t)}
	if _, err := s.Latest(ctx); !errors.Is(err, ErrNoRates) {
		t.Fatalf("empty store: %v", err)
	}
	body := recorded(t)
	feed, err := fetchServed(t, body)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Save(ctx, feed)
	if err != nil || len(res.Stored) != 1 || res.Latest != "2024-12-31" {
		t.Fatalf("save: %v %+v", err, res)
	}
	var source string
	var digest []byte
	if err := s.Pool.QueryRow(ctx, `SELECT source, feed_sha256 FROM fx_rate_days WHERE rate_date = '2024-12-31'`).Scan(&source, &digest); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(body)); string(digest) != string(sum[:]) || !strings.HasSuffix(source, "/stats/eurofxref/eurofxref-daily.xml") {
		t.Errorf("row source %q digest %x", source, digest)
	}
	day, err := s.Latest(ctx)
	if err != nil || day.DateString() != "2024-12-31" || day.Rates["USD"] != "1.0389" || len(day.Rates) != 25 {
		t.Fatalf("latest: %v %+v", err, day)
	}
	if res, err := s.Save(ctx, feed); err != nil || len(res.Known) != 1 || len(res.Stored) != 0 {
		t.Fatalf("second save: %v %+v", err, res)
	}

	// A feed with a new day and a rewritten 2024-12-31: nothing of it is
	// stored, the day the quotes cite stays.
	two := strings.Replace(strings.Replace(body, "rate='1.0389'", "rate='1.1000'", 1),
		"\t</Cube>\n</gesmes", "\t\t<Cube time='2025-01-02'><Cube currency='USD' rate='1.0350'/><Cube currency='GBP' rate='0.8290'/></Cube>\n\t</Cube>\n</gesmes", 1)
	feed2, err := fetchServed(t, two)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, feed2); !errors.Is(err, ErrChanged) {
		t.Fatalf("rewrite accepted: %v", err)
	}
	if n := countDays(t, s); n != 1 {
		t.Fatalf("%d days after a refused feed", n)
	}
	if day, _ := s.Latest(ctx); day.Rates["USD"] != "1.0389" {
		t.Fatalf("stored day changed: %+v", day)
	}

	// Hostile bodies never reach the store.
	for _, bad := range []string{strings.Replace(body, "rate='1.0389'", "rate='-1'", 1), "<html/>", body[:100]} {
		if _, err := fetchServed(t, bad); !errors.Is(err, ErrMalformed) {
			t.Fatalf("accepted: %v", err)
		}
	}
	if n := countDays(t, s); n != 1 {
		t.Fatalf("%d days", n)
	}

	// The runtime role adds days, never rewrites or deletes one.
	for _, sql := range []string{
		`UPDATE fx_rate_days SET rates = '{"USD":"9"}'`,
		`DELETE FROM fx_rate_days`,
		`TRUNCATE fx_rate_days`,
	} {
		_, err := s.Pool.Exec(ctx, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("%s: %v, want permission denied", sql, err)
		}
	}
}
