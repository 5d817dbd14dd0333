package tax

import (
	"slices"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// destinationFact is what the rule data must say about one destination,
// checked against the primary source named beside each fact.
type destinationFact struct {
	// rate is the standard consumption-tax rate (for US and CA: the rate
	// of region).
	rate, region string
	// dutyFree is the duty de minimis in currency ("" = none, "0" =
	// suspended); scheme the low-value scheme's label ("" = none).
	dutyFree, currency, scheme string
}

// destinationFacts pins every destination of the rule data. A destination
// added to data/rates.json without a row here fails
// TestFactTablePerDestination, so new data cannot skip this check.
// EU members share the EU regime: duty relief up to EUR 150 (Reg.
// 1186/2009 art. 23) and IOSS (Directive 2006/112/EC art. 369l-369x).
var destinationFacts = map[string]destinationFact{
	"AT": {rate: "20", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"BE": {rate: "21", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"BG": {rate: "20", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"CY": {rate: "19", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"CZ": {rate: "21", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"DE": {rate: "19", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"DK": {rate: "25", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"EE": {rate: "24", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"ES": {rate: "21", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"FI": {rate: "25.5", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"FR": {rate: "20", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"GR": {rate: "24", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"HR": {rate: "25", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"HU": {rate: "27", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"IE": {rate: "23", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"IT": {rate: "22", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"LT": {rate: "21", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"LU": {rate: "17", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"LV": {rate: "21", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"MT": {rate: "18", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"NL": {rate: "21", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"PL": {rate: "23", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"PT": {rate: "23", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"RO": {rate: "21", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"SE": {rate: "25", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"SI": {rate: "22", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	"SK": {rate: "23", dutyFree: "150", currency: "EUR", scheme: "IOSS"},
	// UK: VAT 20 % (VAT Act 1994 s.2); since 2021-01-01 consignments up to
	// GBP 135 carry UK VAT charged by the seller at the point of sale and
	// no duty (HMRC guidance, the regime's source in the data).
	"GB": {rate: "20", dutyFree: "135", currency: "GBP", scheme: "UK-LVC"},
	// CH: MWSTG art. 25 (8.1 % from 2024); no duty de minimis recorded
	// (industrial tariffs abolished 2024), import VAT under CHF 5 waived.
	"CH": {rate: "8.1", currency: "CHF"},
	// NO: mva-loven § 5-1 (25 %); VOEC under NOK 3,000 per item.
	"NO": {rate: "25", dutyFree: "3000", currency: "NOK", scheme: "VOEC"},
	// US: no federal VAT; state base rate (CA 7.25 %); Section 321 de
	// minimis suspended from 2025-08-29 (EO 14324).
	"US": {rate: "7.25", region: "CA", dutyFree: "0", currency: "USD"},
	// CA: GST 5 % (Excise Tax Act s.165), HST 13 % in ON; CAD 20 courier
	// LVS from non-CUSMA origins.
	"CA": {rate: "13", region: "ON", dutyFree: "20", currency: "CAD"},
	// AU: GST 10 % (GST Act 1999 s.9-70); AUD 1,000 LVG (Div 84).
	"AU": {rate: "10", dutyFree: "1000", currency: "AUD", scheme: "AU-LVG"},
	// NZ: GST 15 % (GST Act 1985 s.8); NZD 1,000 LVG.
	"NZ": {rate: "15", dutyFree: "1000", currency: "NZD", scheme: "NZ-LVG"},
	// JP: consumption tax 10 % (7.8 % national + 2.2 % local); JPY
	// 10,000 small-value exemption (Customs Tariff Act art. 14(18)).
	"JP": {rate: "10", dutyFree: "10000", currency: "JPY"},
	// KR: VAT Act art. 30 (10 %); USD 150 list clearance.
	"KR": {rate: "10", dutyFree: "150", currency: "USD"},
	// SG: GST 9 % from 2024 (GST Act s.16); OVR for goods up to SGD 400;
	// no duty except liquor, tobacco, motor vehicles, petroleum.
	"SG": {rate: "9", currency: "SGD", scheme: "SG-OVR"},
}

func TestFactTablePerDestination(t *testing.T) {
	r, err := load()
	if err != nil {
		t.Fatal(err)
	}
	dests := SupportedDestinations()
	for _, cc := range dests {
		want, ok := destinationFacts[cc]
		if !ok {
			t.Errorf("%s is a destination of the rule data but has no row in destinationFacts: add one, checked against its primary source", cc)
			continue
		}
		t.Run(cc, func(t *testing.T) {
			rate, err := StandardRate(cc, want.region, now)
			if err != nil || rate != money.MustRate(want.rate) {
				t.Errorf("standard rate %s, %v; want %s", rate, err, want.rate)
			}
			if src := strings.TrimSpace(r.rates[cc].Source); src == "" {
				t.Errorf("rates.json has no source for %s's rate", cc)
			}
			th, err := DeMinimis(cc, "DE", ChannelCourier, now)
			if err != nil {
				t.Fatal(err)
			}
			if th.Currency != want.currency {
				t.Errorf("de minimis currency %s, want %s", th.Currency, want.currency)
			}
			switch {
			case want.dutyFree == "" && th.DutyFreeMax != nil:
				t.Errorf("duty de minimis %d, want none", *th.DutyFreeMax)
			case want.dutyFree != "" && (th.DutyFreeMax == nil || *th.DutyFreeMax != minor(t, want.dutyFree, want.currency)):
				t.Errorf("duty de minimis %v, want %s %s", th.DutyFreeMax, want.dutyFree, want.currency)
			}
			if th.Scheme != want.scheme {
				t.Errorf("scheme %q, want %q", th.Scheme, want.scheme)
			}
			if !strings.HasPrefix(th.Source, "https://") {
				t.Errorf("import regime of %s names no primary source: %q", cc, th.Source)
			}
		})
	}
	for cc := range destinationFacts {
		if !slices.Contains(dests, cc) {
			t.Errorf("destinationFacts has %s, which the rule data does not serve", cc)
		}
	}
}
