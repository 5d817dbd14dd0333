package commerce

import (
	"slices"
	"testing"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The USD 249 down jacket from the US warehouse to 350 Fifth Avenue, New
// York 10118, through the invoker and the output schema: New York City's
// combined rate is 8.875 % (state 4, city 4.5, MCTD 0.375: NY Publication
// 718) and New York taxes the shipping of taxable goods (TB-ST-838), so
// the tax is 8.875 % of the jacket and its shipping, per component, not
// the state's 4 % of the jacket alone (USD 9.96). The answer is complete:
// status ok, nothing named not modelled (commerce/rules/README.md#us-sales-tax).
func TestNewYorkCityCombinedRateAndTaxedShipping(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	nyc := Address{Country: "US", Region: "NY", PostalCode: "10118", Line1: "350 Fifth Avenue", City: "New York"}
	q, opt := quoteFrom(t, inv, "US", "USD", nyc, LineItem{SKU: "JKT-DOWN-M-BLK", Quantity: 1})
	d, resp, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt,
		Destination: nyc, Currency: "USD", Incoterm: IncotermDDP})
	if err != nil {
		t.Fatal(err)
	}
	base := q.Subtotal.Amount + opt.Cost.Amount
	var want int64
	for _, r := range []string{"4", "4.5", "0.375"} {
		a, _ := money.MustRate(r).Apply(base)
		want += a
	}
	if q.Subtotal.Amount != 24900 || d.Tax.Amount != want || d.TaxRateBPS != 888 {
		t.Fatalf("jacket USD %d + shipping %d to NYC: tax %d at %d bps, want %d (8.875 %% per component)", q.Subtotal.Amount,
			opt.Cost.Amount, d.Tax.Amount, d.TaxRateBPS, want)
	}
	if resp.Status != toolkit.StatusOK || len(d.NotModelled) != 0 || slices.Contains(resp.Warnings, WarnTaxNotModelled) {
		t.Fatalf("a modelled address answered status %s, not_modelled %v, warnings %v", resp.Status, d.NotModelled, resp.Warnings)
	}
}

// Where the local rate or the taxing of shipping is not modelled (Los
// Angeles: California's local district taxes; Buffalo: Erie County's
// rate), the answer says so in its result (not_modelled) and its status
// (degraded, warning tax_not_modelled), not only in a README; a state
// with no local taxes and no state tax (Oregon) is complete.
func TestUnmodelledLocalTaxIsInStatusAndResult(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	tee := LineItem{SKU: "SHO-RUN-42-BLU", Quantity: 1}
	for _, c := range []struct {
		dest Address
		want []string
	}{
		{Address{Country: "US", Region: "CA", PostalCode: "90012"}, []string{"local_sales_tax_rate", "shipping_taxability"}},
		{Address{Country: "US", Region: "NY", PostalCode: "14202"}, []string{"local_sales_tax_rate"}},
		{Address{Country: "US", Region: "OR", PostalCode: "97201"}, nil},
	} {
		q, opt := quoteFrom(t, inv, "US", "USD", c.dest, tee)
		d, resp, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt,
			Destination: c.dest, Currency: "USD", Incoterm: IncotermDDP})
		if err != nil {
			t.Fatal(err)
		}
		wantStatus := toolkit.StatusDegraded
		if c.want == nil {
			wantStatus = toolkit.StatusOK
		}
		if !slices.Equal(d.NotModelled, c.want) || resp.Status != wantStatus ||
			slices.Contains(resp.Warnings, WarnTaxNotModelled) != (c.want != nil) {
			t.Errorf("%s %s: not_modelled %v, status %s, warnings %v; want %v", c.dest.Region, c.dest.PostalCode,
				d.NotModelled, resp.Status, resp.Warnings, c.want)
		}
	}
}
