package commerce

import (
	"context"
	"testing"
)

func TestQuoteConvertsWithTheECBTable(t *testing.T) {
	e := newEnv(t)
	q, resp, err := invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), GetQuoteArgs{
		Currency: "USD",
		Items:    []LineItem{{SKU: "KNF-SANTOKU-18", Quantity: 2}, {SKU: "WSK-SPEY12-700", Quantity: 1}, {SKU: "TEE-ORG-M-WHT", Quantity: 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// ¥16,500 × 1.0389 / 163.06 = 105.1260… USD; £48 × 1.0389 / 0.82918 = 60.1404… USD.
	want := map[string][2]int64{"KNF-SANTOKU-18": {10513, 21026}, "WSK-SPEY12-700": {6014, 6014}, "TEE-ORG-M-WHT": {2500, 7500}}
	for _, l := range q.Lines {
		w := want[l.SKU]
		if l.UnitPrice.Amount != w[0] || l.LineTotal.Amount != w[1] || l.UnitPrice.Currency != "USD" {
			t.Errorf("%s: unit %v total %v, want %v", l.SKU, l.UnitPrice, l.LineTotal, w)
		}
	}
	if q.Subtotal.Amount != 21026+6014+7500 {
		t.Errorf("subtotal %d", q.Subtotal.Amount)
	}
	if got := q.ExpiresAt.Sub(*e.now.Load()); got != QuoteTTL {
		t.Errorf("expires in %s, want %s", got, QuoteTTL)
	}
	if resp.SnapshotID() == "" || resp.Meta.RulesetVersion == "" || resp.TTLSeconds != 900 {
		t.Errorf("envelope lacks evidence, ruleset or ttl: %+v", resp)
	}
	if q.FXVersion != "fx-ecb-2024-12-31" || q.Lines[0].HSCode != "821192" || q.Lines[0].Origin != "JP" {
		t.Errorf("quote facts: %+v", q)
	}
}

func TestQuoteOutOfStockNamesTheLines(t *testing.T) {
	e := newEnv(t)
	_, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), GetQuoteArgs{
		Currency: "EUR",
		Items:    []LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}, {SKU: "NBK-14AIR-16-512", Quantity: 6}, {SKU: "TEE-ORG-M-WHT", Quantity: 1}},
	})
	te := wantCode(t, err, "OUT_OF_STOCK")
	lines, _ := te.Details["lines"].([]map[string]any)
	if len(lines) != 2 || lines[1]["sku"] != "NBK-14AIR-16-512" || lines[1]["available"] != 5 {
		t.Fatalf("details: %#v", te.Details)
	}
	// Exactly the stock is fine.
	if _, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), GetQuoteArgs{
		Currency: "EUR", Items: []LineItem{{SKU: "NBK-14AIR-16-512", Quantity: 5}},
	}); err != nil {
		t.Fatal(err)
	}
}

func TestQuoteUnknownSKUIsNotFound(t *testing.T) {
	e := newEnv(t)
	_, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), GetQuoteArgs{
		Currency: "EUR", Items: []LineItem{{SKU: "NOPE-0000", Quantity: 1}, {SKU: "TEE-ORG-M-WHT", Quantity: 1}},
	})
	te := wantCode(t, err, "NOT_FOUND")
	if skus, _ := te.Details["skus"].([]string); len(skus) != 1 || skus[0] != "NOPE-0000" {
		t.Fatalf("details: %#v", te.Details)
	}
	// A discontinued product is unknown too.
	if _, err := e.pool.Exec(context.Background(), `UPDATE catalog_products SET active = false WHERE sku = 'TEE-ORG-M-WHT'`); err != nil {
		t.Fatal(err)
	}
	_, _, err = invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), GetQuoteArgs{Currency: "EUR", Items: []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}})
	wantCode(t, err, "NOT_FOUND")
}

func TestRequoteDetectsPriceChange(t *testing.T) {
	e := newEnv(t)
	args := GetQuoteArgs{Currency: "GBP", Items: []LineItem{{SKU: "PRF-ROSE-EDP100", Quantity: 1}, {SKU: "DEO-AERO-150", Quantity: 2}}}
	first, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), args)
	if err != nil {
		t.Fatal(err)
	}
	// Same prices: the re-quote passes and has the same price hash, a new id.
	args.ExpectedPriceHash = first.PriceHash
	e.advance(20 * 60e9)
	again, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), args)
	if err != nil {
		t.Fatal(err)
	}
	if again.PriceHash != first.PriceHash || again.QuoteID == first.QuoteID {
		t.Fatalf("re-quote: hash %s vs %s, id %s vs %s", again.PriceHash, first.PriceHash, again.QuoteID, first.QuoteID)
	}
	if _, err := e.pool.Exec(context.Background(), `UPDATE catalog_products SET base_price_minor = 14500 WHERE sku = 'PRF-ROSE-EDP100'`); err != nil {
		t.Fatal(err)
	}
	_, _, err = invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), args)
	te := wantCode(t, err, "PRICE_CHANGED")
	if te.Details["price_hash"] == first.PriceHash || te.Details["lines"] == nil || te.CanRetry {
		t.Fatalf("details: %#v", te)
	}
}

func TestQuoteRejectsBadInputBeforeTheTool(t *testing.T) {
	e := newEnv(t)
	for name, args := range map[string]any{
		"no currency":     map[string]any{"items": []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": 1}}},
		"zero quantity":   GetQuoteArgs{Currency: "EUR", Items: []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 0}}},
		"unknown field":   map[string]any{"currency": "EUR", "items": []any{map[string]any{"sku": "TEE-ORG-M-WHT", "quantity": 1}}, "x": 1},
		"lower-case sku":  GetQuoteArgs{Currency: "EUR", Items: []LineItem{{SKU: "tee", Quantity: 1}}},
		"no rate for XOF": GetQuoteArgs{Currency: "XOF", Items: []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}}},
		"duplicate sku":   GetQuoteArgs{Currency: "EUR", Items: []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1}, {SKU: "TEE-ORG-M-WHT", Quantity: 2}}},
		"too many of one": GetQuoteArgs{Currency: "EUR", Items: []LineItem{{SKU: "TEE-ORG-M-WHT", Quantity: 1000}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_1", ""), args)
			wantCode(t, err, "INVALID_ARGUMENT")
		})
	}
}
