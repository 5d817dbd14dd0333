package commerce

import (
	"context"
	"time"

	"github.com/cartwright-dev/cartwright/commerce/rules/money"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// QuoteTTL is how long a price quote holds; the DraftOrder workflow
// re-quotes a confirmation that arrives later.
const QuoteTTL = 15 * time.Minute

func quoteSpec() toolkit.Spec {
	s := lookupSpec(ToolGetQuote, QuoteTTL, "catalog-postgres",
		"Price a basket of catalog SKUs in one currency, with live stock. Use it first when building an order, "+
			"and again when a quote has expired. Success: every line priced (unit price converted from the catalog base "+
			"price with the ECB reference rates, line total exact in minor units), a quote_id, expires_at (15 min) and a "+
			"price_hash. Pass expected_price_hash to re-quote what the user already saw. Common failures: NOT_FOUND "+
			"(unknown or discontinued SKU), OUT_OF_STOCK (quantity above available stock, details name the SKU and "+
			"what is available), PRICE_CHANGED (prices differ from expected_price_hash; details carry the new price_hash "+
			"and lines; show them and ask the user again), INVALID_ARGUMENT (currency without an exchange rate), "+
			"UPSTREAM_ERROR (the exchange rates are older than allowed; details name rate_date). fx_rates names the "+
			"rates' source and reference date.")
	// 1.1.0: the answer names its exchange rates (fx_rates), and a line may
	// name the warehouse that ships it (a split basket).
	s.Version = "1.1.0"
	return s
}

// priceKey is the priced content a PriceHash covers.
type priceKey struct {
	Currency string      `json:"currency"`
	Lines    []priceLine `json:"lines"`
}

type priceLine struct {
	SKU       string `json:"sku"`
	Quantity  int    `json:"quantity"`
	UnitPrice Money  `json:"unit_price"`
}

// PriceHash is the canonical hash of a quote's prices: currency and, per
// line in order, SKU, quantity and unit price.
func PriceHash(currency string, lines []QuoteLine) (string, error) {
	k := priceKey{Currency: currency, Lines: make([]priceLine, len(lines))}
	for i, l := range lines {
		k.Lines[i] = priceLine{SKU: l.SKU, Quantity: l.Quantity, UnitPrice: l.UnitPrice}
	}
	return toolkit.CanonicalHash(k)
}

func (t *tools) getQuote(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
	var in GetQuoteArgs
	if err := call.Bind(&in); err != nil {
		return nil, err
	}
	shipFrom, err := warehouse("ship_from", in.ShipFrom)
	if err != nil {
		return nil, err
	}
	products, err := lookupItems(ctx, t.catalog, in.Items)
	if err != nil {
		return nil, err
	}
	now := t.now()
	fx, rates, err := t.fx.Rates(ctx, now)
	if err != nil {
		return nil, err
	}
	q := Quote{Currency: in.Currency, ExpiresAt: now.Add(QuoteTTL).Truncate(time.Second), FXVersion: fx.Version(), FXRates: &rates, ShipFrom: shipFrom}
	var short []map[string]any
	for _, it := range in.Items {
		p := products[it.SKU]
		// A line of a split basket names its own warehouse.
		from, lineFrom := shipFrom, ""
		if it.ShipFrom != "" {
			if from, err = warehouse("items.ship_from", it.ShipFrom); err != nil {
				return nil, err
			}
			lineFrom = from
		}
		if avail := p.AvailableAt(from); it.Quantity > avail {
			short = append(short, map[string]any{"sku": it.SKU, "requested": it.Quantity, "available": avail, "warehouse": from})
			continue
		}
		unit, err := fx.Convert(p.BasePrice, in.Currency)
		if err != nil {
			return nil, err
		}
		total, err := money.MulDiv(unit.Amount, int64(it.Quantity), 1)
		if err != nil {
			return nil, toolkit.Errorf(toolkit.InvalidArgument, "line %s: amount overflows", it.SKU)
		}
		q.Lines = append(q.Lines, QuoteLine{
			SKU: p.SKU, Title: p.Title, Quantity: it.Quantity, UnitPrice: unit,
			LineTotal: Money{Amount: total, Currency: in.Currency},
			HSCode:    p.HSCode, Origin: p.Origin, Category: p.Category, WeightGrams: p.WeightGrams, Dims: p.Dims,
			ShipFrom: lineFrom,
		})
	}
	if len(short) > 0 {
		return nil, toolkit.Errorf(toolkit.OutOfStock, "not enough stock for %d line(s)", len(short)).
			WithDetail("lines", short).
			WithRecovery("lower the quantity to what is available or remove the line", ToolGetQuote)
	}
	if q.Subtotal, err = sumLines(in.Currency, q.Lines); err != nil {
		return nil, err
	}
	if q.PriceHash, err = PriceHash(q.Currency, q.Lines); err != nil {
		return nil, err
	}
	if in.ExpectedPriceHash != "" && in.ExpectedPriceHash != q.PriceHash {
		return nil, priceChanged(in.ExpectedPriceHash, q)
	}
	if q.QuoteID, err = newID("q_", now); err != nil {
		return nil, err
	}
	return &toolkit.Output{Data: q, RulesetVersion: q.FXVersion + "+" + money.RulesetVersion()}, nil
}

// priceChanged carries the new prices so the caller can show them without
// a second call; the user must confirm again.
func priceChanged(expected string, q Quote) *toolkit.Error {
	lines := make([]map[string]any, len(q.Lines))
	for i, l := range q.Lines {
		lines[i] = map[string]any{"sku": l.SKU, "quantity": l.Quantity, "unit_price": l.UnitPrice, "line_total": l.LineTotal}
	}
	return toolkit.Errorf(toolkit.PriceChanged, "prices changed since the quote the user saw").
		WithDetail("expected_price_hash", expected).WithDetail("price_hash", q.PriceHash).
		WithDetail("subtotal", q.Subtotal).WithDetail("lines", lines).
		WithRecovery("show the new prices and ask the user to confirm again", ToolGetQuote)
}

// sumLines adds line totals with overflow checks.
func sumLines(currency string, lines []QuoteLine) (Money, error) {
	var total int64
	for _, l := range lines {
		var err error
		if total, err = money.Add(total, l.LineTotal.Amount); err != nil {
			return Money{}, toolkit.Errorf(toolkit.InvalidArgument, "subtotal overflows")
		}
	}
	return Money{Amount: total, Currency: currency}, nil
}
