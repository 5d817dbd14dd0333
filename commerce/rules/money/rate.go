package money

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Rate is a percentage held exactly in parts per million: 1% = 10_000,
// 19% = 190_000, Quebec's 9.975% = 99_750, Finland's 25.5% = 255_000.
// Basis points cannot hold 9.975%, floats cannot hold 0.1 exactly; ppm
// holds every published VAT, GST and duty rate with room to spare.
type Rate int64

// PPMPerPercent is the number of ppm in one percent.
const PPMPerPercent = 10_000

// ParseRate parses a decimal percentage such as "19", "25.5" or "9.975"
// (at most four decimals, not negative) into a Rate.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if s == "" || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("money: bad rate %q", s)
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 4 || len(whole) > 6 {
		return 0, fmt.Errorf("money: bad rate %q", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("money: bad rate %q", s)
	}
	var f int64
	if frac != "" {
		if f, err = strconv.ParseInt(frac+strings.Repeat("0", 4-len(frac)), 10, 64); err != nil || strings.ContainsAny(frac, "+-") {
			return 0, fmt.Errorf("money: bad rate %q", s)
		}
	}
	return Rate(w*PPMPerPercent + f), nil
}

// MustRate is ParseRate for constants in tests and code; it panics on a
// malformed literal.
func MustRate(s string) Rate {
	r, err := ParseRate(s)
	if err != nil {
		panic(err)
	}
	return r
}

// BPS returns the rate in basis points rounded half-up (9.975% → 998):
// for display only; compute with Apply.
func (r Rate) BPS() int64 {
	v, _ := MulDiv(int64(r), 1, 100)
	return v
}

// String formats the rate as a percentage without trailing zeros ("25.5").
func (r Rate) String() string {
	s := fmt.Sprintf("%d.%04d", int64(r)/PPMPerPercent, int64(r)%PPMPerPercent)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Apply returns amount × rate rounded half-up to the minor unit.
func (r Rate) Apply(amount int64) (int64, error) {
	return MulDiv(amount, int64(r), 100*PPMPerPercent)
}

// MarshalJSON writes the rate as a JSON string percentage ("9.975") so
// data files and evidence stay human-readable and exact.
func (r Rate) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

// UnmarshalJSON accepts a JSON number or string percentage. Numbers are
// read from their decimal text, never through float64.
func (r *Rate) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}
