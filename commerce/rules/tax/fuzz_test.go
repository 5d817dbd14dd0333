package tax

import (
	"testing"
	"time"
)

// FuzzEstimate checks the invariants every caller relies on over arbitrary
// inputs: no panic, and when there is an answer, amounts are non-negative
// and add up (lines to totals, duty+tax to checkout+delivery).
func FuzzEstimate(f *testing.F) {
	f.Add("GB", "", "GBP", "DE", "610910", "CN", int64(20000), int64(1), int64(1500), true, int64(0))
	f.Add("US", "CA", "USD", "DE", "640399", "VN", int64(5000), int64(3), int64(0), false, int64(400))
	f.Add("JP", "", "JPY", "US", "4901", "", int64(123457), int64(7), int64(999), false, int64(-200))
	f.Add("CA", "QC", "EUR", "US", "xx", "MX", int64(1), int64(1), int64(1), true, int64(100))
	f.Fuzz(func(t *testing.T, country, region, cur, from, hs, origin string, value, qty, ship int64, ddp bool, days int64) {
		inc := DAP
		if ddp {
			inc = DDP
		}
		in := Input{
			Destination: Destination{Country: country, Region: region}, ShipFrom: from, Currency: cur,
			Lines:    []Line{{SKU: "a", HSCode: hs, OriginCountry: origin, CustomsValue: value, Quantity: qty}, {SKU: "b", HSCode: "6109", CustomsValue: value / 3, Quantity: 1}},
			Shipping: ship, Incoterm: inc, At: now.Add(time.Duration(days%4000) * 24 * time.Hour),
		}
		r, err := Estimate(in)
		if err != nil {
			return
		}
		if r.Duty < 0 || r.Tax < 0 || r.ChargedAtCheckout < 0 || r.PayableOnDelivery < 0 {
			t.Fatalf("negative amounts: %+v", r)
		}
		if r.Total != r.Duty+r.Tax || r.Total != r.ChargedAtCheckout+r.PayableOnDelivery {
			t.Fatalf("totals do not add up: %+v", r)
		}
		var d, x, c int64
		for _, l := range r.Lines {
			d += l.Duty
			x += l.Tax
		}
		for _, comp := range r.TaxComponents {
			c += comp.Amount
		}
		if d != r.Duty || x != r.Tax || c != r.Tax {
			t.Fatalf("breakdown does not add up: %+v", r)
		}
	})
}
