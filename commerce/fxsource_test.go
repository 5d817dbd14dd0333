package commerce

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/fxrates"
	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// dayStore is a LatestRates over fixed days (the PostgreSQL store has its
// own test: commerce/fxrates).
type dayStore struct{ days []fxrates.Day }

func (s *dayStore) LatestOnOrBefore(_ context.Context, at time.Time) (fxrates.Day, error) {
	for i := len(s.days) - 1; i >= 0; i-- {
		if !s.days[i].Date.After(at) {
			return s.days[i], nil
		}
	}
	return fxrates.Day{}, fxrates.ErrNoRates
}

// recordedDay is the recorded ECB feed of 2024-12-31 (commerce/fxrates/testdata).
func recordedDay(t *testing.T) fxrates.Day {
	t.Helper()
	raw, err := os.ReadFile("fxrates/testdata/eurofxref-daily-2024-12-31.xml")
	if err != nil {
		t.Fatal(err)
	}
	days, err := fxrates.Parse(raw, time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return days[0]
}

// fxEnv is the in-memory stack with an FX source and a clock the test
// moves.
func fxEnv(t *testing.T, src FXSource, at *time.Time) (*toolkit.Invoker, *memEvidence) {
	t.Helper()
	cipher, err := evidence.NewAESGCMFromBase64(evidencetest.KeyID, evidencetest.Key())
	if err != nil {
		t.Fatal(err)
	}
	deps := ToolDeps{Audit: noWrites{}, Sealer: cipher, Unsealed: true, Catalog: seedCatalog(t), Drafts: noWrites{},
		Clock: func() time.Time { return *at }, FXSource: src}
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, deps); err != nil {
		t.Fatal(err)
	}
	ev := &memEvidence{}
	return toolkit.NewInvoker(reg, ev, nil), ev
}

// Prices use the latest stored day, name it (fx_rates, fx_version) in
// the answer the evidence keeps, and refuse rates older than the allowed
// age with UPSTREAM_ERROR naming their date.
func TestPricesCiteTheFeedDateOrRefuseStaleRates(t *testing.T) {
	day := recordedDay(t)
	store := &dayStore{}
	at := time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC)
	inv, ev := fxEnv(t, &FeedFX{Store: store, MaxAge: 120 * time.Hour, CacheFor: time.Nanosecond}, &at)
	item := []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}

	_, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: item, Currency: "EUR"})
	if te := wantCode(t, err, toolkit.UpstreamError); te.Details["upstream_code"] != "fx_rates_missing" {
		t.Errorf("no rates: %+v", te.Details)
	}

	store.days = append(store.days, day)
	q, resp, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: item, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	if q.FXRates == nil || *q.FXRates != (FXRates{Source: FXSourceFeed, Date: "2024-12-31", Base: "EUR"}) || q.FXVersion != "fx-ecb-2024-12-31" {
		t.Fatalf("fx: %+v %s", q.FXRates, q.FXVersion)
	}
	// USD 25.00 at 1.0389 USD per EUR = EUR 24.06.
	if q.Lines[0].UnitPrice.Amount != 2406 {
		t.Errorf("unit price %+v", q.Lines[0].UnitPrice)
	}
	snap, ok := ev.get(resp.SnapshotID())
	if !ok || snap.RulesetVersion != "fx-ecb-2024-12-31+"+moneyVersion(t) ||
		!strings.Contains(string(snap.Output), `"fx_rates":{"base":"EUR","date":"2024-12-31","source":"ecb_feed"}`) {
		t.Errorf("evidence %v %q %s", ok, snap.RulesetVersion, snap.Output)
	}

	// A newer day (synthetic: the recorded one with another USD rate)
	// replaces it at once.
	next := fxrates.Day{Date: day.Date.AddDate(0, 0, 2), Rates: map[string]string{}}
	for c, r := range day.Rates {
		next.Rates[c] = r
	}
	next.Rates["USD"] = "1.0350"
	store.days = append(store.days, next)
	q, _, err = memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: item, Currency: "EUR"})
	if err != nil || q.FXRates.Date != "2025-01-02" || q.Lines[0].UnitPrice.Amount != 2415 {
		t.Fatalf("newer day: %v %+v %+v", err, q.FXRates, q.Lines)
	}

	// Five days later without a new day: every tool that converts refuses,
	// naming the stale date.
	at = time.Date(2025, 1, 7, 0, 0, 1, 0, time.UTC)
	for _, call := range []func() error{
		func() error {
			_, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: item, Currency: "EUR"})
			return err
		},
		func() error {
			_, _, err := memCall[ShippingQuote](t, inv, ToolQuoteShipping, QuoteShippingArgs{Items: item, Currency: "EUR",
				Destination: Address{Country: "FR", PostalCode: "75001"}})
			return err
		},
	} {
		te := wantCode(t, call(), toolkit.UpstreamError)
		if te.Details["rate_date"] != "2025-01-02" || te.Details["upstream_code"] != "fx_rates_stale" {
			t.Errorf("stale refusal %q %+v", te.Message, te.Details)
		}
	}
}

// Without a feed the shipped table prices, and says so.
func TestFallbackTableIsNamedInTheQuote(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	q, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	if q.FXRates == nil || *q.FXRates != (FXRates{Source: FXSourceFallback, Date: "2024-12-31", Base: "EUR"}) {
		t.Fatalf("%+v", q.FXRates)
	}
}

func moneyVersion(t *testing.T) string {
	t.Helper()
	return money.RulesetVersion()
}

// A price at a moment uses the rates in force then: a day dated later (a
// test clock in the past, a feed's tomorrow) is never used early.
func TestFeedFXNeverUsesALaterDay(t *testing.T) {
	day := recordedDay(t)
	later := fxrates.Day{Date: day.Date.AddDate(0, 0, 5), Rates: map[string]string{"USD": "2", "GBP": "1"}}
	f := &FeedFX{Store: &dayStore{days: []fxrates.Day{day, later}}, MaxAge: 120 * time.Hour}
	_, info, err := f.Rates(context.Background(), time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC))
	if err != nil || info.Date != "2024-12-31" {
		t.Fatalf("%v %+v", err, info)
	}
	_, info, err = f.Rates(context.Background(), time.Date(2025, 1, 5, 16, 0, 0, 0, time.UTC))
	if err != nil || info.Date != "2025-01-05" {
		t.Fatalf("%v %+v", err, info)
	}
}
