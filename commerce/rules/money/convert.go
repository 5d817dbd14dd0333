package money

import (
	"fmt"
	"math/big"
)

// ConvertRat converts amount (minor units of from) into minor units of to at
// rate, the number of units of to per one unit of from. The result is
// rounded half-up once, at the end, so converting JPY 1 into KWD or KWD 1
// into JPY both round correctly whatever the two exponents.
func ConvertRat(amount int64, from, to string, rate *big.Rat) (int64, error) {
	ef, err := Exponent(from)
	if err != nil {
		return 0, err
	}
	et, err := Exponent(to)
	if err != nil {
		return 0, err
	}
	if rate == nil || rate.Sign() <= 0 {
		return 0, fmt.Errorf("money: exchange rate must be positive")
	}
	v := new(big.Rat).SetInt64(amount)
	v.Mul(v, rate)
	v.Mul(v, new(big.Rat).SetFrac(big.NewInt(pow10(et)), big.NewInt(pow10(ef))))
	return RoundRat(v)
}
