package commerce

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The way docs/testing.md#setting-stock-for-testing gives to set stock
// works as written: its SQL, run as the runtime role on a fresh database,
// leaves 3 down jackets in DE and in the US, and the quote answers from it
// at once (4 are OUT_OF_STOCK naming 3 available, 3 are priced).
func TestDocumentedStockSettingWorks(t *testing.T) {
	testenv.Integration(t)
	raw, err := os.ReadFile("../docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "## Setting stock for testing")
	if start < 0 {
		t.Fatal("docs/testing.md has no section Setting stock for testing")
	}
	body := doc[start:]
	from := strings.Index(body, "```sql\n")
	to := strings.Index(body[from+7:], "```")
	if from < 0 || to < 0 {
		t.Fatal("the section has no sql block")
	}
	sql := body[from+7 : from+7+to]
	pool := testenv.Postgres(t)
	if _, err := pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("the documented SQL fails as the runtime role: %v\n%s", err, sql)
	}
	e := newEnvOn(t, pool)
	for _, wh := range []string{"DE", "US"} {
		_, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_stock", ""), GetQuoteArgs{
			Items: []LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 4}}, Currency: "EUR", ShipFrom: wh})
		te := wantCode(t, err, toolkit.OutOfStock)
		lines, _ := te.Details["lines"].([]map[string]any)
		if len(lines) != 1 || lines[0]["available"] != 3 {
			t.Errorf("%s: details %v", wh, te.Details)
		}
		if _, _, err := invoke[Quote](t, e, ToolGetQuote, request("u_stock", ""), GetQuoteArgs{
			Items: []LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 3}}, Currency: "EUR", ShipFrom: wh}); err != nil {
			t.Errorf("%s: 3 of 3: %v", wh, err)
		}
	}
}
