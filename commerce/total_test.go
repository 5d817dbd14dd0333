package commerce

import (
	"encoding/json"
	"testing"
	"time"
)

// fixture is a small EUR order: 2 × €24.50 wine + €45.00 chef's knife
// pieces, standard shipping €12.90, duty €0, VAT €19.81.
func fixture(t *testing.T) TotalParts {
	t.Helper()
	lines := []QuoteLine{
		{SKU: "WIN-BDX19-750", Title: "wine", Quantity: 2, UnitPrice: eur(2450), LineTotal: eur(4900), HSCode: "220421", Origin: "FR",
			Category: "alcohol", WeightGrams: 1350, Dims: Dimensions{340, 100, 100}},
		{SKU: "KNF-CHEF-20", Title: "knife", Quantity: 1, UnitPrice: eur(8900), LineTotal: eur(8900), HSCode: "821192", Origin: "DE",
			Category: "blade", WeightGrams: 380, Dims: Dimensions{360, 80, 35}},
	}
	h, err := PriceHash("EUR", lines)
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)
	return TotalParts{
		Quote:    Quote{QuoteID: "q_01JAAAAAAAAAAAAAAAAAAAAAAA", Currency: "EUR", Lines: lines, Subtotal: eur(13800), ExpiresAt: exp, PriceHash: h, FXVersion: "fx-ecb-2024-12-31"},
		Shipping: ShippingOption{OptionID: "standard", ServiceLevel: ServiceStandard, Carrier: "DHL Paket", Cost: eur(1290), MinDays: 2, MaxDays: 4, ChargeableGrams: 3100, Zone: "eu-1", TransportMode: "ground"},
		Duties: DutiesAndTaxes{Country: "DE", Currency: "EUR", Incoterm: IncotermDDP, Duty: eur(0), Tax: eur(1981), TaxName: "VAT", TaxRateBPS: 1900,
			Lines:               []DutyLine{{SKU: "WIN-BDX19-750", Duty: eur(0), Tax: eur(931)}, {SKU: "KNF-CHEF-20", Duty: eur(0), Tax: eur(1050)}},
			CollectedAtCheckout: true, ChargedAtCheckout: eur(1981), PayableOnDelivery: eur(0), Regime: "domestic",
			Notes: []string{}, RulesetVersion: "test"},
	}
}

func eur(a int64) Money { return Money{Amount: a, Currency: "EUR"} }

func TestTotalAddsExactly(t *testing.T) {
	in := fixture(t)
	tot, err := ComputeTotal(in)
	if err != nil {
		t.Fatal(err)
	}
	if tot.GrandTotal != eur(13800+1290+1981) || tot.DueOnDelivery != eur(0) || tot.Subtotal != eur(13800) {
		t.Fatalf("DDP total: %+v", tot)
	}
	// DAP: duty and tax leave the checkout total and are due on delivery.
	in.Duties.Incoterm, in.Duties.CollectedAtCheckout = IncotermDAP, false
	in.Duties.ChargedAtCheckout, in.Duties.PayableOnDelivery = eur(0), eur(1981)
	dap, err := ComputeTotal(in)
	if err != nil {
		t.Fatal(err)
	}
	if dap.GrandTotal != eur(13800+1290) || dap.DueOnDelivery != eur(1981) || dap.QuoteHash == tot.QuoteHash {
		t.Fatalf("DAP total: %+v", dap)
	}
	if err := verifyTotal(tot); err != nil {
		t.Fatal(err)
	}
	if err := verifyTotal(dap); err != nil {
		t.Fatal(err)
	}
}

func TestQuoteHashIgnoresQuoteIDAndExpiry(t *testing.T) {
	in := fixture(t)
	a, _ := ComputeTotal(in)
	in.Quote.QuoteID = "q_01JBBBBBBBBBBBBBBBBBBBBBBB"
	in.Quote.ExpiresAt = in.Quote.ExpiresAt.Add(time.Hour)
	b, _ := ComputeTotal(in)
	if a.QuoteHash != b.QuoteHash {
		t.Fatal("a re-quote at the same prices must keep the hash the user confirmed")
	}
	in.Shipping.Cost = eur(1291)
	c, _ := ComputeTotal(in)
	if c.QuoteHash == a.QuoteHash {
		t.Fatal("one cent of shipping must change the hash")
	}
}

func TestTotalRefusesMixedCurrencies(t *testing.T) {
	in := fixture(t)
	in.Shipping.Cost = Money{Amount: 1400, Currency: "USD"}
	_, err := ComputeTotal(in)
	te := wantCode(t, err, "INVALID_ARGUMENT")
	if f, _ := te.Details["fields"].([]string); len(f) != 1 || f[0] != "shipping.cost.currency" {
		t.Fatalf("details %v", te.Details)
	}
}

func TestTotalRefusesTamperedQuote(t *testing.T) {
	in := fixture(t)
	in.Quote.Lines[1].UnitPrice = eur(100)
	in.Quote.Lines[1].LineTotal = eur(100)
	in.Quote.Subtotal = eur(5000)
	_, err := ComputeTotal(in)
	wantCode(t, err, "INVALID_ARGUMENT") // price_hash no longer matches
	in = fixture(t)
	in.Quote.Lines[0].LineTotal = eur(4800)
	_, err = ComputeTotal(in)
	wantCode(t, err, "INVALID_ARGUMENT")
}

// TestTotalTakesOnlySnapshotIDs: checkout.compute_total's input is the
// snapshots of the caller's workflow; amounts, rates and verdicts handed
// in are refused before the tool runs, and ids that name nothing are
// refused as missing evidence.
func TestTotalTakesOnlySnapshotIDs(t *testing.T) {
	e := newEnv(t)
	in := fixture(t)
	raw, _ := json.Marshal(map[string]any{"quote": in.Quote, "shipping": in.Shipping, "duties": in.Duties,
		"origins_snapshot_id": "ev_a", "pricing_snapshot_id": "ev_b", "compliance_snapshot_id": "ev_c"})
	_, _, err := invoke[Total](t, e, ToolComputeTotal, request("u_1", ""), json.RawMessage(raw))
	wantCode(t, err, "INVALID_ARGUMENT")
	_, _, err = invoke[Total](t, e, ToolComputeTotal, request("u_1", ""),
		ComputeTotalArgs{EvidenceRefs{OriginsSnapshotID: "ev_a", PricingSnapshotID: "ev_b", ComplianceSnapshotID: "ev_c"}})
	wantCode(t, err, "FORBIDDEN")
}

func TestTotalSplitsCheckoutAndDelivery(t *testing.T) {
	// DAP into the EU under IOSS: the VAT is charged at checkout, a duty
	// (had there been one) at the border.
	in := fixture(t)
	in.Duties.Incoterm, in.Duties.CollectedAtCheckout = IncotermDAP, false
	in.Duties.Duty = eur(300)
	in.Duties.ChargedAtCheckout, in.Duties.PayableOnDelivery = eur(1981), eur(300)
	tot, err := ComputeTotal(in)
	if err != nil {
		t.Fatal(err)
	}
	if tot.GrandTotal != eur(13800+1290+1981) || tot.DueOnDelivery != eur(300) {
		t.Fatalf("total %+v", tot)
	}
	if err := verifyTotal(tot); err != nil {
		t.Fatal(err)
	}
	in.Duties.PayableOnDelivery = eur(299)
	_, err = ComputeTotal(in)
	wantCode(t, err, "INVALID_ARGUMENT")
	// A provider that only says "all at checkout" still works.
	in = fixture(t)
	in.Duties.ChargedAtCheckout, in.Duties.PayableOnDelivery = Money{}, Money{}
	if tot, err = ComputeTotal(in); err != nil || tot.DueOnDelivery.Amount != 0 {
		t.Fatalf("%+v %v", tot, err)
	}
}
