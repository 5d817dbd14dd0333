package tax

import (
	"fmt"
	"math/big"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
)

// BuiltinConverter converts with the package's indicative EUR cross rates
// (data/fx.json). It is good enough to decide which side of a threshold an
// order falls on when the caller has no FX table, and nothing else: pass
// the pricing FX converter in Input.Convert for real estimates.
func BuiltinConverter() ThresholdConverter {
	return func(amount int64, from, to string) (int64, error) {
		if from == to {
			return amount, nil
		}
		r, err := load()
		if err != nil {
			return 0, err
		}
		rf, okf := r.fx[from]
		rt, okt := r.fx[to]
		if !okf || !okt {
			return 0, fmt.Errorf("tax: no indicative FX rate for %s→%s", from, to)
		}
		return money.ConvertRat(amount, from, to, new(big.Rat).Quo(rt, rf))
	}
}
