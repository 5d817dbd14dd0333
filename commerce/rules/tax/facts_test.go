package tax

import (
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// These tests pin the rule data to public facts (sources in data/*.json).
// A failing test here means the data changed: check the source before
// changing the expectation.

var now = time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestStandardRatesPinned(t *testing.T) {
	cases := []struct {
		country, region, rate string
	}{
		// The brief's anchors.
		{"DE", "", "19"}, {"FR", "", "20"}, {"GB", "", "20"}, {"JP", "", "10"}, {"AU", "", "10"},
		{"CA", "AB", "5"}, {"CA", "ON", "13"},
		// EU members.
		{"AT", "", "20"}, {"BE", "", "21"}, {"BG", "", "20"}, {"HR", "", "25"}, {"CY", "", "19"}, {"CZ", "", "21"},
		{"DK", "", "25"}, {"EE", "", "24"}, {"FI", "", "25.5"}, {"GR", "", "24"}, {"HU", "", "27"}, {"IE", "", "23"},
		{"IT", "", "22"}, {"LV", "", "21"}, {"LT", "", "21"}, {"LU", "", "17"}, {"MT", "", "18"}, {"NL", "", "21"},
		{"PL", "", "23"}, {"PT", "", "23"}, {"RO", "", "21"}, {"SK", "", "23"}, {"SI", "", "22"}, {"ES", "", "21"}, {"SE", "", "25"},
		// Rest of Europe and Asia-Pacific.
		{"CH", "", "8.1"}, {"NO", "", "25"}, {"NZ", "", "15"}, {"KR", "", "10"}, {"SG", "", "9"},
		// Canada: HST provinces replace GST; PST/QST/RST add to it.
		{"CA", "NS", "14"}, {"CA", "NB", "15"}, {"CA", "NL", "15"}, {"CA", "PE", "15"},
		{"CA", "BC", "12"}, {"CA", "MB", "12"}, {"CA", "SK", "11"}, {"CA", "QC", "14.975"}, {"CA", "YT", "5"},
		// US state base rates, and the five states without a state sales tax.
		{"US", "CA", "7.25"}, {"US", "NY", "4"}, {"US", "TX", "6.25"}, {"US", "WA", "6.5"}, {"US", "FL", "6"},
		{"US", "IL", "6.25"}, {"US", "PA", "6"}, {"US", "NJ", "6.625"}, {"US", "MA", "6.25"}, {"US", "LA", "5"},
		{"US", "OR", "0"}, {"US", "MT", "0"}, {"US", "NH", "0"}, {"US", "DE", "0"}, {"US", "AK", "0"},
	}
	for _, c := range cases {
		got, err := StandardRate(c.country, c.region, now)
		if err != nil || got != money.MustRate(c.rate) {
			t.Errorf("%s-%s: got %s, %v; want %s", c.country, c.region, got, err, c.rate)
		}
	}
}

func TestRateChangesApplyFromTheirDate(t *testing.T) {
	cases := []struct {
		country, region, date, rate string
	}{
		{"EE", "", "2025-06-30", "22"}, {"EE", "", "2025-07-01", "24"},
		{"FI", "", "2024-08-31", "24"}, {"FI", "", "2024-09-01", "25.5"},
		{"SK", "", "2024-12-31", "20"}, {"SK", "", "2025-01-01", "23"},
		{"RO", "", "2025-07-31", "19"}, {"RO", "", "2025-08-01", "21"},
		{"CA", "NS", "2025-03-31", "15"}, {"CA", "NS", "2025-04-01", "14"},
		{"SG", "", "2023-12-31", "8"}, {"SG", "", "2024-01-01", "9"},
		{"CH", "", "2023-12-31", "7.7"}, {"CH", "", "2024-01-01", "8.1"},
		{"LU", "", "2023-06-01", "16"}, {"LU", "", "2024-01-01", "17"},
	}
	for _, c := range cases {
		got, err := StandardRate(c.country, c.region, date(c.date))
		if err != nil || got != money.MustRate(c.rate) {
			t.Errorf("%s-%s on %s: got %s, %v; want %s", c.country, c.region, c.date, got, err, c.rate)
		}
	}
}

func TestBooksRates(t *testing.T) {
	for c, want := range map[string]string{"DE": "7", "FR": "5.5", "GB": "0", "IE": "0", "IT": "4", "FI": "13.5", "CH": "2.6"} {
		if got, err := BooksRate(c, now); err != nil || got != money.MustRate(want) {
			t.Errorf("books %s: %s %v, want %s", c, got, err, want)
		}
	}
}

func TestAllEUMembersAndTaxDestinationsCovered(t *testing.T) {
	dests := SupportedDestinations()
	if len(dests) < 37 {
		t.Fatalf("only %d destinations", len(dests))
	}
	r, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.eu) != 27 {
		t.Errorf("%d EU members", len(r.eu))
	}
	if r.version != "tax-2026.11.5" || len(r.sources) < 10 {
		t.Errorf("version %q, %d sources", r.version, len(r.sources))
	}
}

func minor(t *testing.T, s, cur string) int64 {
	t.Helper()
	v, err := money.ParseMajor(s, cur)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDeMinimisThresholdsPinned(t *testing.T) {
	eq := func(name string, got *int64, want string, cur string) {
		t.Helper()
		if want == "" {
			if got != nil {
				t.Errorf("%s: got %d, want none", name, *got)
			}
			return
		}
		if got == nil || *got != minor(t, want, cur) {
			t.Errorf("%s: got %v, want %s %s", name, got, want, cur)
		}
	}
	th := func(c, from string, at time.Time) Threshold {
		t.Helper()
		x, err := DeMinimis(c, from, ChannelCourier, at)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		return x
	}
	// EU: duty relief up to EUR 150 (Reg. 1186/2009), VAT from the first
	// euro, IOSS at checkout up to EUR 150; EUR 3 flat duty from 2026-07-01.
	eu := th("FR", "US", date("2026-03-01"))
	eq("EU duty", eu.DutyFreeMax, "150", "EUR")
	eq("EU tax-free", eu.TaxFreeMax, "", "EUR")
	eq("EU IOSS", eu.CheckoutTaxMax, "150", "EUR")
	eq("EU flat before July 2026", eu.FlatDutyPerHS6, "", "EUR")
	eu = th("DE", "CN", now)
	eq("EU flat duty", eu.FlatDutyPerHS6, "3", "EUR")
	// GB: GBP 135, VAT at the point of sale.
	gb := th("GB", "", now)
	eq("GB duty", gb.DutyFreeMax, "135", "GBP")
	eq("GB checkout VAT", gb.CheckoutTaxMax, "135", "GBP")
	// AU: AUD 1000, GST at checkout per item.
	au := th("AU", "", now)
	eq("AU duty", au.DutyFreeMax, "1000", "AUD")
	eq("AU LVG", au.CheckoutTaxMax, "1000", "AUD")
	if au.CheckoutBasis != "item" {
		t.Errorf("AU basis %s", au.CheckoutBasis)
	}
	// NZ: NZD 1000.
	eq("NZ duty", th("NZ", "", now).DutyFreeMax, "1000", "NZD")
	// CA: CAD 20/20, CUSMA CAD 150/40 by courier from the US or Mexico;
	// mail from the US keeps CAD 20 (Customs Notice 20-18).
	ca := th("CA", "DE", now)
	eq("CA duty", ca.DutyFreeMax, "20", "CAD")
	eq("CA tax", ca.TaxFreeMax, "20", "CAD")
	ca = th("CA", "US", now)
	eq("CA CUSMA duty", ca.DutyFreeMax, "150", "CAD")
	eq("CA CUSMA tax", ca.TaxFreeMax, "40", "CAD")
	if ca.Source != "https://www.cbsa-asfc.gc.ca/publications/dm-md/d8/d8-2-16-eng.html" {
		t.Errorf("CA CUSMA courier cites %s", ca.Source)
	}
	for _, ch := range []Channel{ChannelPostal, ""} {
		mail, err := DeMinimis("CA", "US", ch, now)
		if err != nil {
			t.Fatal(err)
		}
		eq("CA mail from US duty "+string(ch), mail.DutyFreeMax, "20", "CAD")
		eq("CA mail from US tax "+string(ch), mail.TaxFreeMax, "20", "CAD")
		if !mail.ChannelBound {
			t.Error("CA from US must say its thresholds depend on the channel")
		}
	}
	// US: USD 800 until 2025-08-28, suspended (0) from 2025-08-29.
	eq("US before", th("US", "", date("2025-08-28")).DutyFreeMax, "800", "USD")
	eq("US after", th("US", "", date("2025-08-29")).DutyFreeMax, "0", "USD")
	if us := th("US", "", date("2025-06-01")); len(us.IneligibleOrigins) != 2 {
		t.Errorf("US CN/HK exclusion: %v", us.IneligibleOrigins)
	}
	// JP: JPY 10,000; KR: USD 150 (USD 200 from the US); SG: SGD 400;
	// CH: tax amounts up to CHF 5; NO: VOEC under NOK 3000.
	jp := th("JP", "", now)
	eq("JP duty", jp.DutyFreeMax, "10000", "JPY")
	eq("JP tax", jp.TaxFreeMax, "10000", "JPY")
	eq("KR", th("KR", "", now).DutyFreeMax, "150", "USD")
	eq("KR from US", th("KR", "US", now).DutyFreeMax, "200", "USD")
	eq("SG OVR", th("SG", "", now).CheckoutTaxMax, "400", "SGD")
	eq("CH tax min", th("CH", "", now).TaxMinAmount, "5", "CHF")
	no := th("NO", "", now)
	eq("NO VOEC", no.CheckoutTaxMax, "3000", "NOK")
	if !no.Strict {
		t.Error("VOEC is 'under NOK 3000'")
	}
}
