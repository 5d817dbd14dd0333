package commerce

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Product is one catalog entry with the facts pricing, shipping, duty and
// compliance rules need, and the stock available to sell.
type Product struct {
	SKU         string
	Title       string
	Category    string
	BasePrice   Money
	WeightGrams int
	Dims        Dimensions
	HSCode      string
	Origin      string
	// UNNumber is the dangerous good the product is or contains ("" if none).
	UNNumber   string
	BatteryWh  float64
	VolumeML   int
	ABVPercent float64
	// Available is on hand minus reserved in the default warehouse (DE).
	Available int
	// Stock is on hand minus reserved in the other warehouses, by
	// warehouse country (US, GB); a warehouse not listed has none.
	Stock map[string]int
}

// DefaultWarehouse is where an order ships from when it names no
// warehouse: the original EU warehouse, whose stock is Product.Available.
const DefaultWarehouse = "DE"

// AvailableAt is the product's available stock in a warehouse ("" is the
// default one).
func (p Product) AvailableAt(warehouse string) int {
	if warehouse == "" || warehouse == DefaultWarehouse {
		return p.Available
	}
	return p.Stock[warehouse]
}

// Catalog looks products up by SKU. The built-in one reads PostgreSQL; a
// PIM/WMS adapter can replace it.
type Catalog interface {
	// Products returns the active products among skus, keyed by SKU; an
	// unknown or inactive SKU is simply absent.
	Products(ctx context.Context, skus []string) (map[string]Product, error)
}

// PGCatalog is the Catalog over catalog_products and catalog_stock.
type PGCatalog struct {
	Pool *pgxpool.Pool
}

// Products implements Catalog.
func (c PGCatalog) Products(ctx context.Context, skus []string) (map[string]Product, error) {
	rows, err := c.Pool.Query(ctx, `SELECT p.sku, p.title, p.category, p.base_price_minor, p.base_currency,
			p.weight_grams, p.length_mm, p.width_mm, p.height_mm, p.hs_code, p.origin_country,
			coalesce(p.un_number, ''), coalesce(p.battery_wh, 0)::float8, coalesce(p.volume_ml, 0),
			coalesce(p.abv_percent, 0)::float8, coalesce(s.on_hand - s.reserved, 0),
			coalesce((SELECT jsonb_object_agg(w.warehouse, w.on_hand - w.reserved)
				FROM catalog_warehouse_stock w WHERE w.sku = p.sku), '{}'::jsonb)
		FROM catalog_products p LEFT JOIN catalog_stock s ON s.sku = p.sku
		WHERE p.sku = ANY($1) AND p.active`, skus)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Product, error) {
		var p Product
		err := r.Scan(&p.SKU, &p.Title, &p.Category, &p.BasePrice.Amount, &p.BasePrice.Currency,
			&p.WeightGrams, &p.Dims.LengthMM, &p.Dims.WidthMM, &p.Dims.HeightMM, &p.HSCode, &p.Origin,
			&p.UNNumber, &p.BatteryWh, &p.VolumeML, &p.ABVPercent, &p.Available, &p.Stock)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	out := make(map[string]Product, len(list))
	for _, p := range list {
		out[p.SKU] = p
	}
	return out, nil
}
