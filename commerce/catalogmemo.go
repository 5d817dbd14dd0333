package commerce

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
)

// catalogMemo holds the catalogue answers of one unit of work, keyed by
// the sorted SKU list asked.
type catalogMemo struct {
	mu      sync.Mutex
	answers map[string]map[string]Product
}

type catalogMemoKey struct{}

// WithCatalogMemo returns ctx under which the tools read each SKU list
// from the catalogue once and answer later lookups of the same list from
// that read. A draft order's quote step (activities.Tools.Quote) uses it:
// the origin choice, pricing and compliance then see one read of the
// catalogue instead of three made milliseconds apart, one round trip
// instead of three (docs/performance.md#one-quote-step). The memo lives as long as ctx;
// nothing is cached across calls of different activities.
func WithCatalogMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, catalogMemoKey{}, &catalogMemo{answers: map[string]map[string]Product{}})
}

// memoProducts is cat.Products through ctx's memo, if any. Each caller gets
// its own copy of the map (Product values are not mutated by the tools).
func memoProducts(ctx context.Context, cat Catalog, skus []string) (map[string]Product, error) {
	memo, _ := ctx.Value(catalogMemoKey{}).(*catalogMemo)
	if memo == nil {
		return cat.Products(ctx, skus)
	}
	sorted := slices.Clone(skus)
	slices.Sort(sorted)
	key := strings.Join(sorted, "\x00")
	memo.mu.Lock()
	defer memo.mu.Unlock()
	if got, ok := memo.answers[key]; ok {
		return maps.Clone(got), nil
	}
	got, err := cat.Products(ctx, skus)
	if err != nil {
		return nil, err
	}
	memo.answers[key] = got
	return maps.Clone(got), nil
}
