package tax

import (
	"strings"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// The lookups the fact tests pin data with: each answers one number the
// way Estimate reads it (rateSetFor, rateFor, threshold).

// StandardRate returns the combined standard consumption-tax rate of a
// destination at a date: DE → 19, GB → 20, CA-ON → 13 (HST), CA-BC → 12
// (GST 5 + PST 7), US-CA → 7.25 (state rate only). Region is required for
// US and CA.
func StandardRate(country, region string, at time.Time) (money.Rate, error) {
	r, err := load()
	if err != nil {
		return 0, err
	}
	s, err := r.rateSetFor(strings.ToUpper(country), region, "", at)
	if err != nil {
		return 0, err
	}
	return s.total(), nil
}

// BooksRate returns the VAT/GST rate of printed books (HS 4901) for a
// destination without regions, or its standard rate when no book rate is
// recorded.
func BooksRate(country string, at time.Time) (money.Rate, error) {
	r, err := load()
	if err != nil {
		return 0, err
	}
	s, err := r.rateSetFor(strings.ToUpper(country), "", "", at)
	if err != nil {
		return 0, err
	}
	var t money.Rate
	for i := range s.comps {
		t += s.rateFor(i, "4901")
	}
	return t, nil
}

// DeMinimis returns the import regime of a destination at a date for a
// parcel shipped from shipFrom ("" = DefaultShipFrom) through channel
// ("" = not known: no channel-bound override applies): e.g. EU €150 duty
// relief, GB £135, AU AUD 1000, CA CAD 20 (CAD 150/40 by courier from US
// or MX), US USD 800 before 2025-08-29 and 0 after.
func DeMinimis(country, shipFrom string, channel Channel, at time.Time) (Threshold, error) {
	r, err := load()
	if err != nil {
		return Threshold{}, err
	}
	if shipFrom == "" {
		shipFrom = DefaultShipFrom
	}
	return r.threshold(strings.ToUpper(country), strings.ToUpper(shipFrom), channel, at)
}
