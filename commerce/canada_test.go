package commerce

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Canada end to end through the real invoker (input and output schemas,
// evidence): the tools as the draft order calls them, from the US
// warehouse by USPS (postal) and by UPS (courier), and from the German
// one, for a shirt made in Bangladesh and one made in the US (CUSMA
// originating), below and above the thresholds. The rules:
// commerce/rules/README.md#canada-postal-and-courier-imports.
func TestCanadaPostalCourierThroughInvoker(t *testing.T) {
	inv, cat, _ := newMemEnv(t)
	// The seed catalogue has no US-made goods: a test product that
	// differs from the seed T-shirt only by origin.
	usMade := cat["TEE-ORG-M-WHT"]
	usMade.SKU, usMade.Origin = "TEE-USA-M-WHT", "US"
	cat[usMade.SKU] = usMade
	dest := Address{Country: "CA", Region: "ON", PostalCode: "K1A 0B1"}

	cases := []struct {
		from, service, sku string
		qty                int
		// basis is the duty basis of the line; taxed whether HST is due.
		basis string
		taxed bool
		notes []string
	}{
		// UPS from the US (courier): one shirt (≈ CAD 36) is free of duty
		// and tax; two (≈ CAD 72) pay HST only; six (≈ CAD 215) pay duty,
		// the MFN 18 % unless the shirt is CUSMA originating.
		{"US", ServiceStandard, "TEE-ORG-M-WHT", 1, "de_minimis", false, []string{"CA_CUSMA_COURIER", "CHANNEL_COURIER"}},
		{"US", ServiceExpress, "TEE-ORG-M-WHT", 2, "de_minimis", true, []string{"CHANNEL_COURIER"}},
		{"US", ServiceStandard, "TEE-ORG-M-WHT", 6, "chapter_rate", true, nil},
		{"US", ServiceStandard, "TEE-USA-M-WHT", 6, "preferential", true, []string{"FTA_PREFERENCE_ASSUMED"}},
		// USPS from the US (mail): CAD 20 for duty and tax.
		{"US", ServiceEconomy, "TEE-ORG-M-WHT", 1, "chapter_rate", true, []string{"CA_LVS", "CHANNEL_POSTAL"}},
		{"US", ServiceEconomy, "TEE-USA-M-WHT", 1, "preferential", true, []string{"CHANNEL_POSTAL"}},
		// From Germany, courier or not: CAD 20; a US-made shirt has left
		// North America and gets no CUSMA rate.
		{"DE", ServiceExpress, "TEE-ORG-M-WHT", 1, "chapter_rate", true, nil},
		{"DE", ServiceExpress, "TEE-USA-M-WHT", 6, "chapter_rate", true, []string{"FTA_NOT_DIRECT"}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s-%s-%s-x%d", c.from, c.service, c.sku, c.qty)
		t.Run(name, func(t *testing.T) {
			if c.from == "DE" {
				p := cat[c.sku]
				p.Available = 100
				cat[c.sku] = p
			}
			items := []LineItem{{SKU: c.sku, Quantity: c.qty}}
			d := canadaDuties(t, inv, c.from, c.service, dest, items)
			l := d.Lines[0]
			if l.DutyBasis != c.basis {
				t.Errorf("duty basis %s, want %s (%+v)", l.DutyBasis, c.basis, d)
			}
			if (l.Duty.Amount > 0) != (c.basis == "chapter_rate") {
				t.Errorf("duty %d with basis %s", l.Duty.Amount, l.DutyBasis)
			}
			if c.basis == "chapter_rate" && l.DutyRateBPS != 1800 {
				t.Errorf("duty rate %d bps, want the MFN 18 %%", l.DutyRateBPS)
			}
			if (d.Tax.Amount > 0) != c.taxed || d.TaxDeMinimis == c.taxed {
				t.Errorf("tax %d (relief %v), want taxed=%v", d.Tax.Amount, d.TaxDeMinimis, c.taxed)
			}
			for _, n := range c.notes {
				if !slices.ContainsFunc(d.Notes, func(s string) bool { return strings.HasPrefix(s, n+":") }) {
					t.Errorf("notes lack %s: %v", n, d.Notes)
				}
			}
			if c.service == ServiceEconomy && slices.ContainsFunc(d.Notes, func(s string) bool { return strings.HasPrefix(s, "CA_CUSMA_COURIER:") }) {
				t.Errorf("a USPS parcel cites the courier thresholds: %v", d.Notes)
			}
		})
	}
}

// canadaDuties runs pricing, shipping and the duty tool for items from a
// warehouse with one service, as the draft order does.
func canadaDuties(t *testing.T, inv *toolkit.Invoker, from, service string, dest Address, items []LineItem) DutiesAndTaxes {
	t.Helper()
	q, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: items, Currency: "CAD", ShipFrom: from})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := memCall[ShippingQuote](t, inv, ToolQuoteShipping, QuoteShippingArgs{Items: items, Currency: "CAD", Destination: dest, ShipFrom: from})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(s.Options, func(o ShippingOption) bool { return o.ServiceLevel == service })
	if i < 0 {
		t.Fatalf("no %s option from %s", service, from)
	}
	d, resp, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: s.Options[i],
		Destination: dest, Currency: "CAD", Incoterm: IncotermDDP})
	if err != nil || !resp.OK {
		t.Fatalf("duties: %v", err)
	}
	if _, _, err := computeParts(TotalParts{Quote: q, Shipping: s.Options[i], Duties: d}); err != nil {
		t.Fatalf("total: %v", err)
	}
	return d
}

// A hostile caller buys USPS (economy, postal) and relabels the option's
// carrier as UPS to get the courier thresholds: the channel comes from
// the warehouse's rate card for the service, so the parcel stays postal.
// An unknown service level is refused by the schema, not guessed.
func TestCanadaCarrierTextCannotBuyCourierThresholds(t *testing.T) {
	inv, _, _ := newMemEnv(t)
	dest := Address{Country: "CA", Region: "ON", PostalCode: "K1A 0B1"}
	items := []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}
	q, _, err := memCall[Quote](t, inv, ToolGetQuote, GetQuoteArgs{Items: items, Currency: "CAD", ShipFrom: "US"})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := memCall[ShippingQuote](t, inv, ToolQuoteShipping, QuoteShippingArgs{Items: items, Currency: "CAD", Destination: dest, ShipFrom: "US"})
	if err != nil {
		t.Fatal(err)
	}
	opt := s.Options[slices.IndexFunc(s.Options, func(o ShippingOption) bool { return o.ServiceLevel == ServiceEconomy })]
	opt.Carrier = "UPS Worldwide Express"
	d, _, err := memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt,
		Destination: dest, Currency: "CAD", Incoterm: IncotermDDP})
	if err != nil {
		t.Fatal(err)
	}
	if d.Duty.Amount == 0 || d.Tax.Amount == 0 || d.DutyDeMinimis || d.TaxDeMinimis {
		t.Errorf("a relabelled USPS parcel got courier relief: %+v", d)
	}
	opt.ServiceLevel = "courier"
	_, _, err = memCall[DutiesAndTaxes](t, inv, ToolDutiesAndTaxes, DutiesAndTaxesArgs{Lines: q.Lines, Shipping: opt,
		Destination: dest, Currency: "CAD", Incoterm: IncotermDDP})
	wantCode(t, err, toolkit.InvalidArgument)
}
