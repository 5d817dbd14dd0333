package commerce

import (
	"strings"
	"testing"
)

// From the US warehouse to New York (a domestic sale), through the tools
// with the catalogue's prices: the tee (USD 25) and the running shoes
// (USD 130) are clothing and footwear, but only the tee is under New
// York's USD 110 per item, so only the shoes pay New York City's 8.875 %
// (ZIP 10001), on their price and their share of shipping (TB-ST-838); the
// estimate's notes name the exemption and its law
// (commerce/rules/README.md#us-sales-tax).
func TestUSWarehouseAppliesNewYorkClothingExemption(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	ny := Address{Country: "US", Region: "NY", PostalCode: "10001"}
	items := []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 2}, {SKU: "SHO-RUN-42-BLU", Quantity: 1}}
	q, opt := quoteFrom(t, inv, "US", "USD", ny, items...)
	d, _, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt,
		Destination: ny, Currency: "USD", Incoterm: IncotermDDP})
	if err != nil {
		t.Fatal(err)
	}
	tax := map[string]int64{}
	for _, l := range d.Lines {
		tax[l.SKU] = l.Tax.Amount
	}
	if d.Regime != "domestic" || tax["TEE-ORG-M-WHT"] != 0 || tax["SHO-RUN-42-BLU"] != 1269 || d.Tax.Amount != 1269 {
		t.Fatalf("regime %s, tax per line %v, total %v", d.Regime, tax, d.Tax)
	}
	found := false
	for _, n := range d.Notes {
		if strings.HasPrefix(n, "US_NY_CLOTHING_UNDER_110: ") && strings.Contains(n, "§ 1115(a)(30)") {
			found = true
		}
	}
	if !found {
		t.Fatalf("notes %v do not name the exemption and its law", d.Notes)
	}
}
