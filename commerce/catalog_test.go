package commerce

import (
	"context"
	"testing"

	"github.com/cartwright-dev/cartwright/commerce/rules/compliance"
)

// The seed catalog must be usable by every tool: priced in a currency the
// FX table converts, shippable, and classifiable by the compliance rules.
func TestSeedCatalogIsUsableByEveryRule(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rows, err := e.pool.Query(ctx, `SELECT sku FROM catalog_products WHERE active`)
	if err != nil {
		t.Fatal(err)
	}
	var skus []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		skus = append(skus, s)
	}
	if len(skus) < 30 || len(skus) > 50 {
		t.Fatalf("%d products", len(skus))
	}
	products, err := PGCatalog{Pool: e.pool}.Products(ctx, skus)
	if err != nil {
		t.Fatal(err)
	}
	fx, _ := BuiltinFX()
	un := map[string]bool{}
	for _, p := range products {
		if _, err := fx.Convert(p.BasePrice, "USD"); err != nil {
			t.Errorf("%s: %v", p.SKU, err)
		}
		if p.UNNumber != "" {
			un[p.UNNumber] = true
		}
		r, err := compliance.Check(compliance.Input{Destination: compliance.Destination{Country: "FR"}, Items: []compliance.Item{complianceItem(p)}})
		if err != nil {
			t.Fatalf("%s: %v", p.SKU, err)
		}
		for _, reason := range r.Reasons {
			if reason.Code == compliance.ReasonUnknownHSCode || reason.Code == compliance.ReasonUnknownCategory {
				t.Errorf("%s (HS %s) is not classified by the compliance rules", p.SKU, p.HSCode)
			}
		}
	}
	for _, n := range []string{"UN3480", "UN3481", "UN1266", "UN1950", "UN1263", "UN1057"} {
		if !un[n] {
			t.Errorf("no product is %s", n)
		}
	}
}

func TestSpecsAreComplete(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{ToolGetQuote, ToolQuoteShipping, ToolDutiesAndTaxes, ToolCheckCompliance, ToolComputeTotal, ToolCreateDraftOrder} {
		s, ok := e.inv.Registry().Spec(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if !s.EvidenceRequired || s.Retry.MaxAttempts == 0 || s.Timeout == 0 {
			t.Errorf("%s: %+v", name, s)
		}
		write := name == ToolCreateDraftOrder
		if s.Annotations.ReadOnly == write || !s.Annotations.Idempotent || s.NeedsConfirmation != write {
			t.Errorf("%s annotations %+v", name, s.Annotations)
		}
		if !write && s.TTL == 0 {
			t.Errorf("%s has no TTL", name)
		}
	}
}
