package commerce

import (
	"slices"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// quoteFrom prices and rates items from a warehouse to dest, returning the
// quote and the standard option.
func quoteFrom(t *testing.T, inv *toolkit.Invoker, from, cur string, dest Address, items ...LineItem) (Quote, ShippingOption) {
	t.Helper()
	q, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: items, Currency: cur, ShipFrom: from})
	if err != nil {
		t.Fatalf("quote from %s: %v", from, err)
	}
	s, _, err := memCall[ShippingQuote](t, inv, ToolQuoteShipping, QuoteShippingArgs{Items: items, Currency: cur, Destination: dest, ShipFrom: from})
	if err != nil {
		t.Fatalf("shipping from %s: %v", from, err)
	}
	for _, o := range s.Options {
		if o.ServiceLevel == ServiceStandard {
			return q, o
		}
	}
	t.Fatalf("no standard option from %s", from)
	return Quote{}, ShippingOption{}
}

// Duty and tax follow the warehouse the option ships from: CUSMA courier
// relief into Canada from the US, the EU's EUR 3 flat duty and IOSS on an
// import from the UK, a domestic sale inside the US.
func TestWarehouseOriginDecidesDutyAndTax(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	tee := LineItem{SKU: "TEE-ORG-M-WHT", Quantity: 1} // USD 25, HS 6109, origin BD
	for _, c := range []struct {
		name, from, cur string
		dest            Address
		check           func(d DutiesAndTaxes) bool
	}{
		{"DE→CA: CAD 20 courier threshold, duty and HST", "DE", "CAD", Address{Country: "CA", Region: "ON", PostalCode: "K1A 0B1"},
			func(d DutiesAndTaxes) bool { return d.Regime == "import" && d.Duty.Amount > 0 && d.Tax.Amount > 0 }},
		{"US→CA: CUSMA courier, duty-free to CAD 150 and tax-free to CAD 40", "US", "CAD", Address{Country: "CA", Region: "ON", PostalCode: "K1A 0B1"},
			func(d DutiesAndTaxes) bool {
				return d.Regime == "import" && d.Duty.Amount == 0 && d.Tax.Amount == 0 && d.DutyDeMinimis && d.TaxDeMinimis
			}},
		{"DE→FR: intra-EU, French VAT at checkout", "DE", "EUR", Address{Country: "FR", PostalCode: "75001"},
			func(d DutiesAndTaxes) bool {
				return d.Regime == "intra_eu" && d.Duty.Amount == 0 && d.TaxRateBPS == 2000
			}},
		{"GB→FR: import under EUR 150, EUR 3 flat duty (at the border under DAP), VAT through IOSS at checkout", "GB", "EUR",
			Address{Country: "FR", PostalCode: "75001"},
			func(d DutiesAndTaxes) bool {
				return d.Regime == "import" && d.Duty.Amount == 300 && d.Scheme == "IOSS" && d.Lines[0].DutyBasis == "flat_low_value" &&
					d.PayableOnDelivery.Amount == 300 && d.ChargedAtCheckout == d.Tax
			}},
		{"US→US: domestic sale, New York City's sales tax (8.875 %), no duty", "US", "USD", Address{Country: "US", Region: "NY", PostalCode: "10001"},
			func(d DutiesAndTaxes) bool {
				return d.Regime == "domestic" && d.Duty.Amount == 0 && d.TaxRateBPS == 888
			}},
		{"DE→US: import, duty from the first dollar", "DE", "USD", Address{Country: "US", Region: "NY", PostalCode: "10001"},
			func(d DutiesAndTaxes) bool { return d.Regime == "import" && d.Duty.Amount > 0 }},
		{"GB→GB: domestic VAT 20 %", "GB", "GBP", Address{Country: "GB", PostalCode: "SW1A 1AA"},
			func(d DutiesAndTaxes) bool { return d.Regime == "domestic" && d.TaxRateBPS == 2000 && d.Scheme == "" }},
		{"US→GB: import under GBP 135, UK VAT at checkout", "US", "GBP", Address{Country: "GB", PostalCode: "SW1A 1AA"},
			func(d DutiesAndTaxes) bool { return d.Regime == "import" && d.Scheme == "UK-LVC" && d.Duty.Amount == 0 }},
	} {
		q, opt := quoteFrom(t, inv, c.from, c.cur, c.dest, tee)
		if opt.ShipFrom != c.from || q.ShipFrom != c.from {
			t.Errorf("%s: quote from %q, option from %q", c.name, q.ShipFrom, opt.ShipFrom)
		}
		d, _, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt,
			Destination: c.dest, Currency: c.cur, Incoterm: IncotermDAP})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d.ShipFrom != c.from || !c.check(d) {
			t.Errorf("%s: %+v", c.name, d)
			continue
		}
		tot, _, err := computeParts(TotalParts{Quote: q, Shipping: opt, Duties: d})
		if err != nil || tot.ShipFrom != c.from {
			t.Errorf("%s: total %+v %v", c.name, tot, err)
		}
	}
}

// Stock is per warehouse: the down jacket sold out in DE is in stock in
// the US; the US warehouse carries no knives.
func TestWarehouseStock(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	jacket := []LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}}
	_, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: jacket, Currency: "EUR"})
	if te := toolkit.AsError(err); err == nil || te.Code != toolkit.OutOfStock {
		t.Errorf("jacket from DE: %v", err)
	}
	if q, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: jacket, Currency: "EUR", ShipFrom: "US"}); err != nil || q.ShipFrom != "US" {
		t.Errorf("jacket from US: %+v %v", q, err)
	}
	_, _, err = memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: []LineItem{{SKU: "KNF-CHEF-20", Quantity: 1}}, Currency: "USD", ShipFrom: "US"})
	te := toolkit.AsError(err)
	if err == nil || te.Code != toolkit.OutOfStock {
		t.Fatalf("knife from US: %v", err)
	}
	if lines, _ := te.Details["lines"].([]map[string]any); len(lines) != 1 || lines[0]["warehouse"] != "US" || lines[0]["available"] != 0 {
		t.Errorf("details %v", te.Details)
	}
}

// A warehouse that does not exist is invalid input naming the field, and
// a total whose parts come from different warehouses is refused.
func TestWarehouseUnknownOrMixed(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	tee := []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	dest := Address{Country: "FR", PostalCode: "75001"}
	for tool, in := range map[string]any{
		ToolGetQuote:      GetQuoteArgs{Items: tee, Currency: "EUR", ShipFrom: "FR"},
		ToolQuoteShipping: QuoteShippingArgs{Items: tee, Currency: "EUR", Destination: dest, ShipFrom: "FR"},
	} {
		_, _, err := memCall[map[string]any](t, inv, tool, in)
		if te := toolkit.AsError(err); err == nil || te.Code != toolkit.InvalidArgument || !slices.Equal(fieldsOf(te), []string{"ship_from"}) {
			t.Errorf("%s from FR: %v", tool, err)
		}
	}
	q, _ := quoteFrom(t, inv, "DE", "EUR", dest, tee[0])
	_, optUS := quoteFrom(t, inv, "US", "EUR", dest, tee[0])
	optFR := optUS
	optFR.ShipFrom = "FR"
	_, _, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: optFR,
		Destination: dest, Currency: "EUR", Incoterm: IncotermDDP})
	if te := toolkit.AsError(err); err == nil || te.Code != toolkit.InvalidArgument || !slices.Equal(fieldsOf(te), []string{"shipping.ship_from"}) {
		t.Errorf("duties from FR: %v", err)
	}
	d, _, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: optUS,
		Destination: dest, Currency: "EUR", Incoterm: IncotermDDP})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = computeParts(TotalParts{Quote: q, Shipping: optUS, Duties: d})
	if te := toolkit.AsError(err); err == nil || te.Code != toolkit.InvalidArgument || !slices.Equal(fieldsOf(te), []string{"quote.ship_from"}) {
		t.Errorf("total mixing a DE quote with US shipping: %v", err)
	}
}
