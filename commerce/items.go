package commerce

import (
	"context"
	"sort"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// lookupItems resolves a basket's SKUs in the catalog. A SKU listed twice
// is refused (the caller merges quantities, so stock is checked on the
// real total); unknown SKUs are NOT_FOUND, all named at once.
func lookupItems(ctx context.Context, cat Catalog, items []LineItem) (map[string]Product, error) {
	skus := make([]string, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.SKU] {
			return nil, toolkit.Errorf(toolkit.InvalidArgument, "sku %s is listed twice; merge the quantities into one line", it.SKU).
				WithDetail("fields", []string{"items"}).WithDetail("sku", it.SKU)
		}
		seen[it.SKU] = true
		skus = append(skus, it.SKU)
	}
	products, err := memoProducts(ctx, cat, skus)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, s := range skus {
		if _, ok := products[s]; !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, toolkit.Errorf(toolkit.NotFound, "unknown or discontinued sku: %v", missing).
			WithDetail("skus", missing).
			WithRecovery("remove the unknown items or search the catalog for a replacement")
	}
	return products, nil
}

// basket refuses a sanctioned destination, checks a destination to quote
// for and resolves the items shipped there, as the shipping and
// compliance tools take them; warnings are the address validator's.
func (t *tools) basket(ctx context.Context, destination Address, items []LineItem) (Address, map[string]Product, []string, error) {
	if err := refuseSanctioned("destination", destination); err != nil {
		return Address{}, nil, nil, err
	}
	dest, warnings, err := t.checkDestination("destination", destination)
	if err != nil {
		return Address{}, nil, nil, err
	}
	products, err := lookupItems(ctx, t.catalog, items)
	if err != nil {
		return Address{}, nil, nil, err
	}
	return dest, products, warnings, nil
}
