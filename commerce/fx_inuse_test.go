package commerce

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/fxrates"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// lateFeed is one stored day of a late-2026 ECB feed: no BGN (Bulgaria
// adopted the euro on 2026-01-01), THB priced, and (to see what a missing
// threshold currency does) no NOK.
type lateFeed struct{}

func (lateFeed) LatestOnOrBefore(context.Context, time.Time) (fxrates.Day, error) {
	return fxrates.Day{Date: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Rates: map[string]string{
		"USD": "1.1571", "JPY": "180.12", "GBP": "0.8812", "THB": "37.415", "CHF": "0.9312", "SEK": "10.98"}}, nil
}

// newFeedEnv is newMemEnv pricing with the late feed (FeedFX), as the
// worker does.
func newFeedEnv(t *testing.T) *toolkit.Invoker {
	t.Helper()
	cipher, err := evidence.NewAESGCMFromBase64(evidencetest.KeyID, evidencetest.Key())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	deps := ToolDeps{Audit: noWrites{}, Sealer: cipher, Unsealed: true, Catalog: seedCatalog(t), Drafts: noWrites{},
		Clock: func() time.Time { return at }, FXSource: &FeedFX{Store: lateFeed{}, MaxAge: 7 * 24 * time.Hour}}
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, deps); err != nil {
		t.Fatal(err)
	}
	return toolkit.NewInvoker(reg, &memEvidence{}, nil)
}

// The start check refuses only what no rates can price (BGN, withdrawn
// on 2026-01-01; a code no ISO table knows), never a currency because the
// shipped table lacks it: THB starts, and the rates in use decide
// (docs/tools.md#exchange-rates). The refusal offers no list of the
// shipped table's currencies (it used to offer BGN).
func TestStartCheckRefusesWhatNoRatesPrice(t *testing.T) {
	to := Address{Country: "DE", PostalCode: "10115"}
	if err := CheckOrderFacts("THB", to); err != nil {
		t.Errorf("THB refused before any rates were asked: %v", err)
	}
	for _, cur := range []string{"BGN", "XXQ"} {
		err := CheckOrderFacts(cur, Address{Country: "DE", PostalCode: "10115"})
		te := toolkit.AsError(err)
		if err == nil || te.Code != toolkit.InvalidArgument || !slices.Equal(fieldsOf(te), []string{"currency"}) ||
			te.RecoverySuggestion == "" || te.Details["supported"] != nil || strings.Contains(te.Message, "BGN,") {
			t.Errorf("%s: %v (details %v)", cur, err, te.Details)
		}
	}
}

// With the late feed, through the invoker and the output schemas: THB is
// priced and the quote names the feed's date; BGN is refused naming the
// currency and offering the feed's currencies (no BGN); an order to Norway
// (threshold in NOK, which the feed lacks) is estimated against the
// shipped table's rate and says so, instead of refusing the caller's
// currency; the total carries the rates' source and date.
func TestRatesInUseDecideTheCurrency(t *testing.T) {
	inv := newFeedEnv(t)
	tee := []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	q, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: tee, Currency: "THB"})
	if err != nil || q.FXRates == nil || q.FXRates.Source != FXSourceFeed || q.FXRates.Date != "2026-11-20" {
		t.Fatalf("THB with a feed that prices it: %+v %v", q.FXRates, err)
	}
	_, _, err = memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: tee, Currency: "BGN"})
	te := toolkit.AsError(err)
	if err == nil || te.Code != toolkit.InvalidArgument || !slices.Equal(fieldsOf(te), []string{"currency"}) {
		t.Fatalf("BGN: %v", err)
	}
	if sup, _ := te.Details["supported"].([]string); slices.Contains(sup, "BGN") || !slices.Contains(sup, "THB") {
		t.Errorf("BGN refusal offers %v", te.Details["supported"])
	}
	oslo := Address{Country: "NO", PostalCode: "0150"}
	q, opt := memQuote(t, inv, "EUR", oslo, ServiceStandard, tee...)
	d, _, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt,
		Destination: oslo, Currency: "EUR", Incoterm: IncotermDDP})
	if err != nil {
		t.Fatalf("Norway with a feed without NOK: %v (details %v)", err, toolkit.AsError(err).Details)
	}
	if !slices.ContainsFunc(d.Notes, func(n string) bool { return strings.HasPrefix(n, "FX_THRESHOLD_FALLBACK: ") }) {
		t.Errorf("the fallback comparison is not said: %v", d.Notes)
	}
	tot, err := ComputeTotal(TotalParts{Quote: q, Shipping: opt, Duties: d})
	if err != nil || tot.FXRates == nil || tot.FXRates.Date != "2026-11-20" || tot.FXRates.Source != FXSourceFeed {
		t.Fatalf("total: %+v %v", tot.FXRates, err)
	}
}

// The rates in use offer only what an order may be priced in: the shipped
// table of 2024 still rates BGN, withdrawn on 2026-01-01, so the start
// check's refusal of a currency it lacks must not offer BGN.
func TestRatesInUseOfferNoWithdrawnCurrency(t *testing.T) {
	r, err := CurrentRates(context.Background(), nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r.Rates.Source != FXSourceFallback || !slices.Contains(r.Currencies, "NOK") || slices.Contains(r.Currencies, "BGN") {
		t.Fatalf("rates in use %+v", r)
	}
	te := toolkit.AsError(r.CheckCurrency("THB"))
	if te == nil || te.Code != toolkit.InvalidArgument || !slices.Equal(fieldsOf(te), []string{"currency"}) ||
		strings.Contains(te.Message, "BGN") || slices.Contains(te.Details["supported"].([]string), "BGN") {
		t.Fatalf("THB against the shipped table: %v", te)
	}
	if err := r.CheckCurrency("NOK"); err != nil {
		t.Fatalf("NOK against the shipped table: %v", err)
	}
}
