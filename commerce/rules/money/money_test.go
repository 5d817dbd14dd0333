package money

import (
	"math"
	"math/big"
	"testing"
)

// Pins the ISO 4217 minor units the brief names: JPY/KRW 0, most 2,
// KWD/BHD 3.
func TestExponentsPinnedToISO4217(t *testing.T) {
	want := map[string]int{"JPY": 0, "KRW": 0, "ISK": 0, "EUR": 2, "USD": 2, "GBP": 2, "CHF": 2, "HUF": 2, "KWD": 3, "BHD": 3, "OMR": 3, "CLF": 4}
	for c, e := range want {
		got, err := Exponent(c)
		if err != nil || got != e {
			t.Errorf("Exponent(%s) = %d, %v; want %d", c, got, err, e)
		}
	}
	if _, err := Exponent("XXX"); err == nil {
		t.Error("unknown currency accepted")
	}
	if _, err := Exponent("eur"); err == nil {
		t.Error("lower-case code accepted")
	}
	if v := RulesetVersion(); v != "money-2026.11.1" {
		t.Errorf("RulesetVersion = %q", v)
	}
	if tb, err := load(); err != nil || len(tb.sources) == 0 {
		t.Errorf("no sources: %v", err)
	}
}

func TestMulDivHalfUp(t *testing.T) {
	cases := []struct{ a, n, d, want int64 }{
		{5, 1, 10, 1},   // 0.5 → 1
		{4, 1, 10, 0},   // 0.4 → 0
		{15, 1, 10, 2},  // 1.5 → 2
		{25, 1, 10, 3},  // 2.5 → 3 (half-up, not banker's)
		{-5, 1, 10, -1}, // -0.5 → -1 (away from zero)
		{-4, 1, 10, 0},  // -0.4 → 0
		{7, 2, 3, 5},    // 4.67 → 5
		{math.MaxInt64, 2, 2, math.MaxInt64},
	}
	for _, c := range cases {
		got, err := MulDiv(c.a, c.n, c.d)
		if err != nil || got != c.want {
			t.Errorf("MulDiv(%d,%d,%d) = %d, %v; want %d", c.a, c.n, c.d, got, err, c.want)
		}
	}
	if _, err := MulDiv(math.MaxInt64, 2, 1); err != ErrOverflow {
		t.Errorf("overflow not detected: %v", err)
	}
	if _, err := MulDiv(1, 1, 0); err != ErrDivideByZero {
		t.Errorf("zero divisor: %v", err)
	}
}

func TestRateParseAndApply(t *testing.T) {
	cases := []struct {
		s    string
		ppm  int64
		bps  int64
		text string
	}{
		{"19", 190_000, 1900, "19"},
		{"25.5", 255_000, 2550, "25.5"},
		{"9.975", 99_750, 998, "9.975"},
		{"0", 0, 0, "0"},
		{"7.25%", 72_500, 725, "7.25"},
		{"4.225", 42_250, 423, "4.225"},
	}
	for _, c := range cases {
		r, err := ParseRate(c.s)
		if err != nil || int64(r) != c.ppm || r.BPS() != c.bps || r.String() != c.text {
			t.Errorf("ParseRate(%q) = %d (%d bps, %q), %v", c.s, int64(r), r.BPS(), r.String(), err)
		}
	}
	for _, bad := range []string{"", "-1", "+1", "1.23456", "abc", "1.+2", "1e2", "1_0"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	// 19% of 10.05 EUR = 1.9095 → 1.91.
	if v, _ := MustRate("19").Apply(1005); v != 191 {
		t.Errorf("19%% of 1005 = %d", v)
	}
	// Quebec QST on 100.00 CAD = 9.975 → 9.98 (half-up).
	if v, _ := MustRate("9.975").Apply(10000); v != 998 {
		t.Errorf("9.975%% of 10000 = %d", v)
	}
	// JPY has no decimals: 10% of ¥1,235 = 123.5 → ¥124.
	if v, _ := MustRate("10").Apply(1235); v != 124 {
		t.Errorf("10%% of ¥1235 = %d", v)
	}
}

func TestRateJSON(t *testing.T) {
	var r Rate
	if err := r.UnmarshalJSON([]byte(`9.975`)); err != nil || int64(r) != 99_750 {
		t.Fatalf("number: %d %v", r, err)
	}
	if err := r.UnmarshalJSON([]byte(`"25.5"`)); err != nil || int64(r) != 255_000 {
		t.Fatalf("string: %d %v", r, err)
	}
	b, _ := r.MarshalJSON()
	if string(b) != `"25.5"` {
		t.Errorf("marshal = %s", b)
	}
}

func TestParseFormatMajor(t *testing.T) {
	cases := []struct {
		s, cur string
		minor  int64
		out    string
	}{
		{"12.34", "EUR", 1234, "12.34"},
		{"12.3", "EUR", 1230, "12.30"},
		{"1500", "JPY", 1500, "1500"},
		{"1.250", "KWD", 1250, "1.250"},
		{"0.05", "USD", 5, "0.05"},
		{"-3.10", "GBP", -310, "-3.10"},
	}
	for _, c := range cases {
		m, err := ParseMajor(c.s, c.cur)
		if err != nil || m != c.minor {
			t.Errorf("ParseMajor(%q,%s) = %d, %v", c.s, c.cur, m, err)
		}
		f, err := FormatMajor(c.minor, c.cur)
		if err != nil || f != c.out {
			t.Errorf("FormatMajor(%d,%s) = %q, %v", c.minor, c.cur, f, err)
		}
	}
	for _, bad := range [][2]string{{"1.5", "JPY"}, {"1.2345", "KWD"}, {"1e3", "EUR"}, {"1/2", "EUR"}, {"0x10", "EUR"}, {"", "EUR"}, {"1", "ZZZ"}} {
		if _, err := ParseMajor(bad[0], bad[1]); err == nil {
			t.Errorf("ParseMajor(%q,%s) accepted", bad[0], bad[1])
		}
	}
}

func TestConvertAcrossExponents(t *testing.T) {
	// 100.00 EUR at 162.35 JPY/EUR = ¥16,235.
	if v, err := ConvertRat(10000, "EUR", "JPY", big.NewRat(16235, 100)); err != nil || v != 16235 {
		t.Errorf("EUR→JPY = %d, %v", v, err)
	}
	// ¥1,000 at 0.0061596 EUR/JPY = 6.1596 EUR → 6.16.
	if v, err := ConvertRat(1000, "JPY", "EUR", big.NewRat(61596, 10_000_000)); err != nil || v != 616 {
		t.Errorf("JPY→EUR = %d, %v", v, err)
	}
	// 10.00 EUR at 0.3569 KWD/EUR = 3.569 KWD = 3569 fils.
	if v, err := ConvertRat(1000, "EUR", "KWD", big.NewRat(3569, 10000)); err != nil || v != 3569 {
		t.Errorf("EUR→KWD = %d, %v", v, err)
	}
	if _, err := ConvertRat(1, "EUR", "USD", big.NewRat(-1, 1)); err == nil {
		t.Error("negative rate accepted")
	}
}

func TestAllocateIsExactAndDeterministic(t *testing.T) {
	parts, err := Allocate(1000, []int64{1, 1, 1})
	if err != nil || parts[0]+parts[1]+parts[2] != 1000 || parts[0] != 334 || parts[1] != 333 {
		t.Fatalf("Allocate(1000, 1:1:1) = %v, %v", parts, err)
	}
	parts, _ = Allocate(599, []int64{2000, 0, 1000})
	if parts[0] != 399 || parts[1] != 0 || parts[2] != 200 {
		t.Errorf("Allocate(599, 2000:0:1000) = %v", parts)
	}
	parts, _ = Allocate(-7, []int64{0, 0})
	if parts[0]+parts[1] != -7 {
		t.Errorf("negative split = %v", parts)
	}
	if _, err := Allocate(1, []int64{-1}); err == nil {
		t.Error("negative weight accepted")
	}
}

func TestSumOverflow(t *testing.T) {
	if _, err := Sum(math.MaxInt64, 1); err != ErrOverflow {
		t.Errorf("Sum overflow: %v", err)
	}
	if v, err := Sum(1, 2, 3); err != nil || v != 6 {
		t.Errorf("Sum = %d, %v", v, err)
	}
}
