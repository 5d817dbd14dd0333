package commerce

import (
	"testing"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// Two tees from the US warehouse to Germany, priced in euros (an EU
// import under EUR 150, so the interim EUR 3 flat duty and VAT through
// IOSS at checkout). The VAT base is one base in both paths
// (commerce/rules/README.md#eu-low-value-imports): the border's import VAT
// is on value + transport + duty (VAT Directive art. 86(1)), and the
// IOSS sale's VAT is on what the customer pays the seller (art. 73,
// 78(a)), which under DDP includes the flat duty it charges. Under DAP
// the customer pays the duty to customs on delivery, so the seller's
// price, and the IOSS base, leave it out.
func TestIOSSVATBaseIncludesTheFlatDutyTheCustomerPays(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	de := Address{Country: "DE", PostalCode: "10115"}
	q, opt := quoteFrom(t, inv, "US", "EUR", de, LineItem{SKU: "TEE-ORG-M-WHT", Quantity: 2})
	vat := money.MustRate("19")
	for _, c := range []struct {
		incoterm string
		withDuty bool
	}{{IncotermDDP, true}, {IncotermDAP, false}} {
		d, _, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt,
			Destination: de, Currency: "EUR", Incoterm: c.incoterm})
		if err != nil {
			t.Fatalf("%s: %v", c.incoterm, err)
		}
		if d.Scheme != "IOSS" || d.Duty.Amount != 300 || d.Lines[0].DutyBasis != "flat_low_value" {
			t.Fatalf("%s: not the IOSS flat-duty path: %+v", c.incoterm, d)
		}
		base := q.Subtotal.Amount + opt.Cost.Amount
		if c.withDuty {
			base += d.Duty.Amount
		}
		want, _ := vat.Apply(base)
		if d.Tax.Amount != want {
			t.Errorf("%s: VAT %d, want 19 %% of %d = %d (goods %d, transport %d, duty %d)", c.incoterm, d.Tax.Amount,
				base, want, q.Subtotal.Amount, opt.Cost.Amount, d.Duty.Amount)
		}
	}
}
