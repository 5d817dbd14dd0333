package tax

import "testing"

// Regression tests for defects once found in the tax rules; the tool-level
// ones live in package commerce (regressions_test.go).

// Japan's JPY 10,000 small-value exemption does not cover
// knitted garments (HS 61), leather bags (HS 4202) or footwear (HS 64);
// other goods of the same value stay exempt.
func TestJapanSmallValueExclusions(t *testing.T) {
	line := func(sku, hs string) Line {
		return Line{SKU: sku, HSCode: hs, OriginCountry: "CN", CustomsValue: 12000, Quantity: 1}
	}
	// ¥12,000 × 60 % + ¥2,000 shipping = ¥9,200: under ¥10,000.
	for _, c := range []struct {
		name   string
		line   Line
		exempt bool
	}{
		{"knit T-shirt 6109", line("TEE", "610910"), false},
		{"knit sweater 6110", line("SWT", "611011"), false},
		{"leather handbag 4202", line("BAG", "420221"), false},
		{"leather shoes 6403", line("SHO", "640391"), false},
		{"running shoes 6404", line("RUN", "640411"), false},
		{"woven trousers 6203", line("JNS", "620342"), true},
		{"toy 9503", line("TOY", "950300"), true},
		{"leather saddlery 4201", line("SAD", "420100"), true},
	} {
		r := est(t, Input{Destination: Destination{Country: "JP"}, Currency: "JPY", Lines: []Line{c.line}, Shipping: 2000, Incoterm: DAP})
		if exempt := r.Total == 0 && r.DutyDeMinimisApplied && r.TaxDeMinimisApplied; exempt != c.exempt {
			t.Errorf("%s: exempt=%v, want %v (%+v)", c.name, exempt, c.exempt, r)
		}
		if !c.exempt && (r.Duty == 0 || r.Tax == 0 || r.Lines[0].DutyBasis == basisDeMinimis) {
			t.Errorf("%s: excluded goods pay duty and tax: %+v", c.name, r.Lines[0])
		}
	}
	// Knit T-shirt, exactly: duty 7.4 % of ¥9,200 = 680.8 → ¥681;
	// consumption tax 10 % of ¥9,881 = 988.1 → ¥988.
	r := est(t, Input{Destination: Destination{Country: "JP"}, Currency: "JPY", Lines: []Line{line("TEE", "610910")}, Shipping: 2000, Incoterm: DAP})
	if r.Duty != 681 || r.Tax != 988 || !hasNote(r, "JP_10000_YEN_EXCLUSIONS") {
		t.Errorf("knit T-shirt to JP: %+v", r)
	}
	// In a mixed parcel the excluded line pays, the other stays exempt.
	r = est(t, Input{Destination: Destination{Country: "JP"}, Currency: "JPY",
		Lines: []Line{line("TEE", "610910"), {SKU: "TOY", HSCode: "950300", OriginCountry: "CN", CustomsValue: 2000, Quantity: 1}}, Incoterm: DAP})
	if r.Lines[0].Duty == 0 || r.Lines[1].Duty != 0 || r.Lines[1].Tax != 0 || r.Lines[1].DutyBasis != basisDeMinimis {
		t.Errorf("mixed parcel: %+v", r.Lines)
	}
}

// The scheme label names a low-value scheme only when the
// order fell under it. AU LVG ends at AUD 1,000 per item, VOEC at NOK
// 3,000 per item; above, the tax is paid at the border.
func TestSchemeOnlyWithinItsThreshold(t *testing.T) {
	item := func(v int64) []Line {
		return []Line{{SKU: "WCH", HSCode: "910221", OriginCountry: "CH", CustomsValue: v, Quantity: 1}}
	}
	for _, c := range []struct {
		country, cur string
		value        int64
		scheme       string
	}{
		{"AU", "AUD", 1774_00, ""},
		{"AU", "AUD", 999_00, "AU-LVG"},
		{"NO", "NOK", 12477_00, ""},
		{"NO", "NOK", 2999_00, "VOEC"},
		{"GB", "GBP", 136_00, ""},
		{"GB", "GBP", 135_00, "UK-LVC"},
		{"FR", "EUR", 151_00, ""},
		{"FR", "EUR", 100_00, "IOSS"},
	} {
		// Shipped from the US, so FR is an import, not an intra-EU sale.
		r := est(t, Input{Destination: Destination{Country: c.country}, ShipFrom: "US", Currency: c.cur, Lines: item(c.value), Incoterm: DAP})
		if r.Scheme != c.scheme {
			t.Errorf("%s %d %s: scheme %q, want %q", c.country, c.value, c.cur, r.Scheme, c.scheme)
		}
		if c.scheme == "" && r.PayableOnDelivery == 0 {
			t.Errorf("%s %d %s above the scheme: nothing payable at the border under DAP: %+v", c.country, c.value, c.cur, r)
		}
	}
}
