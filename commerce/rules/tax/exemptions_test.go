package tax

import (
	"strings"
	"testing"
	"time"
)

// usOrder is an order of lines to US state st, shipped from the US
// warehouse (a domestic sale) or from DE (an import): US sales tax is
// charged at checkout on the goods either way.
func usOrder(t *testing.T, st, from, cur string, conv ThresholdConverter, lines ...Line) Result {
	t.Helper()
	return est(t, Input{Destination: Destination{Country: "US", Region: st}, ShipFrom: from, Currency: cur,
		Lines: lines, Shipping: 899, Incoterm: DDP, Convert: conv})
}

func item(sku, hs string, unit, qty int64) Line {
	return Line{SKU: sku, HSCode: hs, OriginCountry: "VN", CustomsValue: unit * qty, Quantity: qty}
}

// The clothing exemptions of the rule data (commerce/rules/README.md#us-sales-tax), each against
// the text of its law: NY exempts an item under USD 110 and taxes one at
// USD 110 whole; MA and RI exempt the first USD 175 / 250 of each item and
// tax the excess (New York taxes the shipping of taxable goods too,
// TB-ST-838: 4 % of 110 + 8.99; no postal code, so only the state's tax);
// NJ, PA, MN and VT exempt clothing at any price; goods
// outside HS 61, 62 and 64 stay taxed; a state without an exemption (CA)
// taxes clothing. Each relief is named in the notes, with its law.
func TestUSClothingExemptions(t *testing.T) {
	watch := item("WATCH", "9102.11", 19500, 1)
	cases := []struct {
		name, st string
		lines    []Line
		tax      []int64 // per line
		note     string
	}{
		{"NY tee under 110", "NY", []Line{item("TEE", "6109.10", 2500, 2)}, []int64{0}, "US_NY_CLOTHING_UNDER_110"},
		{"NY 109.99 shoes", "NY", []Line{item("SHOE", "6404.11", 10999, 1)}, []int64{0}, "US_NY_CLOTHING_UNDER_110"},
		{"NY jacket at 110 is taxed whole", "NY", []Line{item("JKT", "6201.40", 11000, 1)}, []int64{476}, ""},
		{"NY down jacket 249", "NY", []Line{item("JKT", "6201.40", 24900, 1)}, []int64{1032}, ""},
		{"NY watch", "NY", []Line{watch}, []int64{816}, ""},
		{"MA shoes 200: tax on 25", "MA", []Line{item("SHOE", "6403.91", 20000, 1)}, []int64{156}, "US_MA_CLOTHING_FIRST_175"},
		{"MA two at 200: tax on 50", "MA", []Line{item("SHOE", "6403.91", 20000, 2)}, []int64{313}, "US_MA_CLOTHING_FIRST_175"},
		{"MA sweater 175", "MA", []Line{item("SWT", "6110.11", 17500, 1)}, []int64{0}, "US_MA_CLOTHING_FIRST_175"},
		{"RI suit 275: tax on 25 (Notice 2012-10)", "RI", []Line{item("SUIT", "6203.11", 27500, 1)}, []int64{175}, "US_RI_CLOTHING_FIRST_250"},
		{"NJ boots 260", "NJ", []Line{item("BOOT", "6403.91", 26000, 1)}, []int64{0}, "US_NJ_CLOTHING"},
		{"PA jacket and watch", "PA", []Line{item("JKT", "6201.40", 24900, 1), watch}, []int64{0, 1170}, "US_PA_CLOTHING"},
		{"MN scarf", "MN", []Line{item("SCF", "6214.10", 14000, 1)}, []int64{0}, "US_MN_CLOTHING"},
		{"VT jeans", "VT", []Line{item("JNS", "6203.42", 8900, 1)}, []int64{0}, "US_VT_CLOTHING"},
		{"CA taxes clothing", "CA", []Line{item("TEE", "6109.10", 2500, 1)}, []int64{181}, ""},
	}
	for _, c := range cases {
		for _, from := range []string{"US", "DE"} {
			r := usOrder(t, c.st, from, "USD", nil, c.lines...)
			for i, want := range c.tax {
				if got := r.Lines[i].Tax; got != want {
					t.Errorf("%s from %s: line %d tax %d, want %d (%+v)", c.name, from, i, got, want, r.Lines[i])
				}
			}
			if c.note != "" && !hasNote(r, c.note) {
				t.Errorf("%s from %s: no note %s in %+v", c.name, from, c.note, r.Notes)
			}
			if c.note == "" && noteWith(r, "CLOTHING") {
				t.Errorf("%s from %s: an exemption was noted without applying: %+v", c.name, from, r.Notes)
			}
		}
	}
}

// The per-item test is in US dollars whatever the order's currency: EUR 95
// at 1.20 is USD 114 (taxed in NY), EUR 90 is USD 108 (exempt); the
// conversion is the caller's (fx_source caller).
func TestUSClothingLimitInDollars(t *testing.T) {
	conv := func(amount int64, from, to string) (int64, error) {
		if from != "EUR" || to != "USD" {
			t.Fatalf("conversion %s→%s", from, to)
		}
		return amount * 12 / 10, nil
	}
	r := usOrder(t, "NY", "DE", "EUR", conv, item("A", "6110.11", 9500, 1), item("B", "6110.11", 9000, 1))
	// A's tax is 4 % of EUR 95 and its EUR 4.62 share of shipping (NY
	// taxes the shipping of taxable goods, TB-ST-838).
	if r.Lines[0].Tax != 398 || r.Lines[1].Tax != 0 || r.FXSource != "caller" {
		t.Fatalf("lines %+v %+v fx %q", r.Lines[0], r.Lines[1], r.FXSource)
	}
}

// An exemption not yet in force does not apply: Rhode Island's USD 250
// limit dates from 2012-10-01 (before it, every item was exempt, which the
// data does not model: the state rate applies).
func TestUSClothingExemptionIsDated(t *testing.T) {
	r := est(t, Input{Destination: Destination{Country: "US", Region: "RI"}, ShipFrom: "US", Currency: "USD",
		Lines: []Line{item("TEE", "6109.10", 2500, 1)}, Incoterm: DDP, At: time.Date(2012, 9, 30, 0, 0, 0, 0, time.UTC)})
	if r.Lines[0].Tax != 175 {
		t.Fatalf("before 2012-10-01: %+v", r.Lines[0])
	}
}

func noteWith(r Result, part string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n.Code, part) {
			return true
		}
	}
	return false
}
