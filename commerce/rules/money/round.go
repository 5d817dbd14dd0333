package money

import (
	"errors"
	"math"
	"math/big"
)

// ErrOverflow is returned when a result does not fit in an int64.
var ErrOverflow = errors.New("money: amount overflows int64")

// ErrDivideByZero is returned for a zero denominator.
var ErrDivideByZero = errors.New("money: division by zero")

// MulDiv returns amount × num / den rounded half-up (ties away from zero).
// It computes with big integers, so amount × num may exceed int64 as long
// as the result fits; this is the one primitive every percentage, FX
// conversion and allocation in the rules packages goes through.
func MulDiv(amount, num, den int64) (int64, error) {
	if den == 0 {
		return 0, ErrDivideByZero
	}
	p := new(big.Int).Mul(big.NewInt(amount), big.NewInt(num))
	return roundQuo(p, big.NewInt(den))
}

// RoundRat rounds the rational r half-up (ties away from zero) to an int64.
func RoundRat(r *big.Rat) (int64, error) {
	return roundQuo(new(big.Int).Set(r.Num()), new(big.Int).Set(r.Denom()))
}

// roundQuo divides n by d rounding half away from zero. n and d may be
// modified.
func roundQuo(n, d *big.Int) (int64, error) {
	if d.Sign() == 0 {
		return 0, ErrDivideByZero
	}
	if d.Sign() < 0 {
		n.Neg(n)
		d.Neg(d)
	}
	neg := n.Sign() < 0
	if neg {
		n.Neg(n)
	}
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	// Round up when the remainder is at least half the divisor: 2r >= d.
	if r.Lsh(r, 1).Cmp(d) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	if !q.IsInt64() {
		return 0, ErrOverflow
	}
	return q.Int64(), nil
}

// Add returns a+b, or ErrOverflow. Totals use it so a corrupt input can
// never wrap around into a small or negative charge.
func Add(a, b int64) (int64, error) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, ErrOverflow
	}
	return a + b, nil
}

// Sum adds amounts with overflow checking.
func Sum(amounts ...int64) (int64, error) {
	var t int64
	for _, a := range amounts {
		var err error
		if t, err = Add(t, a); err != nil {
			return 0, err
		}
	}
	return t, nil
}
