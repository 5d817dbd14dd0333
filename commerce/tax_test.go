package commerce

import (
	"strings"
	"testing"
)

// quoteAndShip prices items in cur and quotes shipping to dest, returning
// what the duty tool takes.
func quoteAndShip(t *testing.T, e *env, cur string, dest Address, items ...LineItem) (Quote, ShippingOption) {
	t.Helper()
	q, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), GetQuoteArgs{Items: items, Currency: cur})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := invoke[ShippingQuote](t, e, ToolQuoteShipping, request("u_1", ""), QuoteShippingArgs{Items: items, Currency: cur, Destination: dest})
	if err != nil {
		t.Fatal(err)
	}
	return q, s.Options[0]
}

func TestDutiesDomesticGermanVAT(t *testing.T) {
	e := newEnv(t)
	dest := Address{Country: "DE", PostalCode: "10115"}
	q, ship := quoteAndShip(t, e, "EUR", dest, LineItem{SKU: "SWT-MERINO-L-NVY", Quantity: 1})
	d, resp, err := invoke[DutiesAndTaxes](t, e, ToolDutiesAndTaxes, request("u_1", ""), DutiesAndTaxesArgs{
		Lines: q.Lines, Shipping: ship, Destination: dest, Currency: "EUR", Incoterm: IncotermDDP})
	if err != nil {
		t.Fatal(err)
	}
	if d.TaxRateBPS != 1900 || d.Duty.Amount != 0 || d.Regime != "domestic" || d.Tax.Amount == 0 {
		t.Fatalf("duties %+v", d)
	}
	if d.ChargedAtCheckout.Amount+d.PayableOnDelivery.Amount != d.Duty.Amount+d.Tax.Amount || !d.CollectedAtCheckout {
		t.Fatalf("split %+v", d)
	}
	if !strings.Contains(resp.Meta.RulesetVersion, "fx-ecb") || resp.SnapshotID() == "" {
		t.Fatalf("envelope %+v", resp.Meta)
	}
	// The total built on it adds up.
	tot, _, err := computeParts(TotalParts{Quote: q, Shipping: ship, Duties: d})
	if err != nil {
		t.Fatal(err)
	}
	if tot.GrandTotal.Amount != q.Subtotal.Amount+ship.Cost.Amount+d.Tax.Amount {
		t.Fatalf("total %+v", tot)
	}
}

func TestDutiesImportDAPLeavesTheBorderPartToTheRecipient(t *testing.T) {
	e := newEnv(t)
	dest := Address{Country: "CH", PostalCode: "8001"}
	q, ship := quoteAndShip(t, e, "CHF", dest, LineItem{SKU: "BOT-CHEL-43-BRN", Quantity: 1})
	d, _, err := invoke[DutiesAndTaxes](t, e, ToolDutiesAndTaxes, request("u_1", ""), DutiesAndTaxesArgs{
		Lines: q.Lines, Shipping: ship, Destination: dest, Currency: "CHF", Incoterm: IncotermDAP})
	if err != nil {
		t.Fatal(err)
	}
	if d.Regime != "import" || d.PayableOnDelivery.Amount == 0 || d.CollectedAtCheckout || d.Currency != "CHF" {
		t.Fatalf("duties %+v", d)
	}
	tot, _, err := computeParts(TotalParts{Quote: q, Shipping: ship, Duties: d})
	if err != nil {
		t.Fatal(err)
	}
	if tot.DueOnDelivery != d.PayableOnDelivery || tot.GrandTotal.Amount != q.Subtotal.Amount+ship.Cost.Amount+d.ChargedAtCheckout.Amount {
		t.Fatalf("total %+v", tot)
	}
}

func TestDutiesNeedAValidDestinationAndOneCurrency(t *testing.T) {
	e := newEnv(t)
	q, ship := quoteAndShip(t, e, "USD", Address{Country: "US", Region: "NY", PostalCode: "10001"}, LineItem{SKU: "TEE-ORG-M-WHT", Quantity: 1})
	_, _, err := invoke[DutiesAndTaxes](t, e, ToolDutiesAndTaxes, request("u_1", ""), DutiesAndTaxesArgs{
		Lines: q.Lines, Shipping: ship, Destination: Address{Country: "US", PostalCode: "10001"}, Currency: "USD", Incoterm: IncotermDDP})
	te := wantCode(t, err, "ADDRESS_INVALID")
	if f, _ := te.Details["fields"].([]string); len(f) != 1 || f[0] != "destination.region" {
		t.Fatalf("fields %v", te.Details["fields"])
	}
	_, _, err = invoke[DutiesAndTaxes](t, e, ToolDutiesAndTaxes, request("u_1", ""), DutiesAndTaxesArgs{
		Lines: q.Lines, Shipping: ship, Destination: Address{Country: "US", Region: "NY", PostalCode: "10001"}, Currency: "EUR", Incoterm: IncotermDDP})
	wantCode(t, err, "INVALID_ARGUMENT")
}
