package money

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// decimalRE is the only amount syntax accepted: no exponent, fraction,
// hex or grouping, so "1e3" or "1/2" can never sneak in as an amount.
var decimalRE = regexp.MustCompile(`^-?[0-9]{1,18}(\.[0-9]{1,18})?$`)

// pow10 returns 10^n for small n.
func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// ParseMajor parses a decimal amount in major units ("12.34" EUR, "1500"
// JPY, "1.250" KWD) into minor units. More decimals than the currency has
// are rejected rather than rounded: an input amount is a fact, not an
// estimate.
func ParseMajor(s, currency string) (int64, error) {
	exp, err := Exponent(currency)
	if err != nil {
		return 0, err
	}
	s = strings.TrimSpace(s)
	if !decimalRE.MatchString(s) {
		return 0, fmt.Errorf("money: bad amount %q", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("money: bad amount %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(pow10(exp)))
	if !r.IsInt() {
		return 0, fmt.Errorf("money: %q has more decimals than %s allows (%d)", s, currency, exp)
	}
	if !r.Num().IsInt64() {
		return 0, ErrOverflow
	}
	return r.Num().Int64(), nil
}

// FormatMajor formats minor units as a plain decimal in major units with
// exactly the currency's decimals ("12.30", "1500", "1.250").
func FormatMajor(amount int64, currency string) (string, error) {
	exp, err := Exponent(currency)
	if err != nil {
		return "", err
	}
	neg := amount < 0
	u := new(big.Int).Abs(big.NewInt(amount))
	s := u.String()
	if exp > 0 {
		if len(s) <= exp {
			s = strings.Repeat("0", exp-len(s)+1) + s
		}
		s = s[:len(s)-exp] + "." + s[len(s)-exp:]
	}
	if neg {
		s = "-" + s
	}
	return s, nil
}
