package commerce

import (
	"slices"
	"strings"

	"github.com/cartwright-dev/cartwright/commerce/rules/shipping"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// warehouse resolves a ship_from field: "" is DefaultWarehouse, anything
// else must be a warehouse the shipping rules have a rate card for (DE,
// US, GB), else INVALID_ARGUMENT naming the field.
func warehouse(field, s string) (string, error) {
	w := strings.ToUpper(strings.TrimSpace(s))
	if w == "" {
		return DefaultWarehouse, nil
	}
	if origins := shipping.Origins(); !slices.Contains(origins, w) {
		return "", toolkit.Errorf(toolkit.InvalidArgument, "%s: no warehouse in %s", field, w).
			WithDetail("fields", []string{field}).WithDetail("warehouses", origins)
	}
	return w, nil
}

// sameWarehouse checks that the parts of a total were computed for one
// origin: stock checked, parcel rated and duties estimated from the same
// warehouse ("" counts as DefaultWarehouse).
func sameWarehouse(in TotalParts) (string, error) {
	norm := func(s string) string {
		if s == "" {
			return DefaultWarehouse
		}
		return s
	}
	w := norm(in.Shipping.ShipFrom)
	var fields []string
	if norm(in.Quote.ShipFrom) != w {
		fields = append(fields, "quote.ship_from")
	}
	if norm(in.Duties.ShipFrom) != w {
		fields = append(fields, "duties.ship_from")
	}
	if len(fields) > 0 {
		return "", toolkit.Errorf(toolkit.InvalidArgument, "quote, shipping and duties must ship from one warehouse (shipping: %s)", w).
			WithDetail("fields", fields)
	}
	return w, nil
}
