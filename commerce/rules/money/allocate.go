package money

import (
	"errors"
	"math/big"
	"sort"
)

// Allocate splits total into parts proportional to weights so that the
// parts add up to total exactly (largest-remainder method). Ties on the
// remainder go to the earlier index, so the split is deterministic.
// It is how shipping is spread over lines for a CIF customs value: rounding
// each share separately could create or lose a cent.
//
// Weights must be non-negative; if they are all zero the total is split
// evenly by count. total may be negative (the parts then are too).
func Allocate(total int64, weights []int64) ([]int64, error) {
	n := len(weights)
	if n == 0 {
		if total == 0 {
			return nil, nil
		}
		return nil, errors.New("money: cannot allocate a non-zero total over no weights")
	}
	w := make([]*big.Int, n)
	sum := new(big.Int)
	for i, x := range weights {
		if x < 0 {
			return nil, errors.New("money: negative allocation weight")
		}
		w[i] = big.NewInt(x)
		sum.Add(sum, w[i])
	}
	if sum.Sign() == 0 {
		for i := range w {
			w[i] = big.NewInt(1)
		}
		sum.SetInt64(int64(n))
	}
	neg := total < 0
	abs := new(big.Int).Abs(big.NewInt(total))
	parts := make([]int64, n)
	rems := make([]*big.Int, n)
	var given int64
	for i := range w {
		q, r := new(big.Int).QuoRem(new(big.Int).Mul(abs, w[i]), sum, new(big.Int))
		parts[i] = q.Int64() // q <= abs, fits
		rems[i] = r
		given += parts[i]
	}
	left := abs.Int64() - given // < n
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rems[idx[a]].Cmp(rems[idx[b]]) > 0 })
	for k := int64(0); k < left; k++ {
		parts[idx[k]]++
	}
	if neg {
		for i := range parts {
			parts[i] = -parts[i]
		}
	}
	return parts, nil
}
