package gateway_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/gateway"
	"github.com/cartwright-dev/cartwright/toolkit"
)

var (
	jacket  = []commerce.LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}}
	newYork = commerce.Address{Name: "Jane Doe", Line1: "350 5th Ave", City: "New York", Region: "NY", PostalCode: "10118", Country: "US"}
)

// An agent's draft order answers where it ships from and why: the down
// jacket to New York, sold out in DE, comes from the US; the MCP answer
// names the choice, every warehouse considered and the evidence.
func TestDraftOrderOverMCPNamesItsOrigins(t *testing.T) {
	s := newStack(t)
	sess := s.connect(t, s.token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: gateway.ToolDraftStart, Arguments: map[string]any{
		"idempotency_key": newKey("origin-mcp"), "currency": "USD", "wait_seconds": 30,
		"items": []any{map[string]any{"sku": "JKT-DOWN-M-BLK", "quantity": 1}},
		"ship_to": map[string]any{"name": "Jane Doe", "line1": "350 5th Ave", "city": "New York", "region": "NY",
			"postal_code": "10118", "country": "US"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var v gateway.DraftOrderView
	remarshal(t, res.StructuredContent, &v)
	// The answer asks for the user's confirmation (an isError answer
	// with NEEDS_USER_CONFIRMATION and the total to show).
	if v.Error == nil || v.Error.Code != toolkit.NeedsUserConfirmation || v.Origins == nil || !slices.Equal(v.Origins.Origins, []string{"US"}) || len(v.Origins.Candidates) != 3 ||
		v.Origins.SnapshotID == "" || v.Confirmation == nil || !slices.Equal(v.Confirmation.ShowUser.ShipsFrom, []string{"US"}) || v.Total == nil || v.Total.ShipFrom != "US" || v.Total.Duty.Amount != 0 {
		t.Fatalf("draft_order.start: error %+v, origins %+v, total %+v", v.Error, v.Origins, v.Total)
	}
}

// TestAttackTotalNotShippedAsChosen: a total that does not ship as the
// origin choice it names is refused — priced from another warehouse than
// chosen (compute_total), the choice stripped from the seal or the
// warehouse edited after sealing (the write), the choice's evidence
// swapped for another tool's (compute_total) — and nothing is written; the
// genuine total is taken and takes its unit from the chosen warehouse's
// stock.
func TestAttackTotalNotShippedAsChosen(t *testing.T) {
	s := newStack(t)
	r := &sealRig{t: t, s: s, wf: "draft-order/u_attacker/" + newKey("origin")}
	refs, plan := r.evidence(jacket, newYork, "USD")
	if !slices.Equal(plan.Origins(), []string{"US"}) {
		t.Fatalf("chose %v", plan.Origins())
	}
	genuine, env, _ := r.total(refs)
	if !env.OK {
		t.Fatalf("the genuine evidence was not totalled: %+v", env.Error)
	}
	var fromGB commerce.Quote
	pricedInGB := r.ok(commerce.ToolGetQuote, commerce.GetQuoteArgs{Items: jacket, Currency: "USD", ShipFrom: "GB"}, &fromGB)
	create := func(tot commerce.Total) (toolkit.Response, string) {
		env := r.invoke(commerce.ToolCreateDraftOrder, commerce.CreateDraftOrderArgs{Total: tot, ConfirmedQuoteHash: tot.QuoteHash,
			ShipTo: newYork}, newKey("origin-create"))
		reason := ""
		if env.Error != nil {
			reason, _ = env.Error.Details["reason"].(string)
		}
		return env, reason
	}
	for _, tc := range []struct {
		name   string
		refs   *commerce.EvidenceRefs
		total  func() commerce.Total
		reason string
	}{
		{"priced from GB, totalled on the US choice", &commerce.EvidenceRefs{OriginsSnapshotID: refs.OriginsSnapshotID,
			PricingSnapshotID: pricedInGB, ComplianceSnapshotID: refs.ComplianceSnapshotID}, nil, "price_not_quoted"},
		{"the origin choice stripped from a sealed total", nil, func() commerce.Total {
			tot := genuine
			e := *tot.Evidence
			e.OriginsSnapshotID = ""
			tot.Evidence = &e
			return tot
		}, "seal_invalid"},
		{"the warehouse edited after sealing", nil, func() commerce.Total {
			tot := genuine
			tot.ShipFrom = "GB"
			return tot
		}, "seal_invalid"},
		{"origin evidence that is pricing's", &commerce.EvidenceRefs{OriginsSnapshotID: refs.PricingSnapshotID,
			PricingSnapshotID: refs.PricingSnapshotID, ComplianceSnapshotID: refs.ComplianceSnapshotID}, nil, "evidence_missing"},
	} {
		var env toolkit.Response
		var reason string
		if tc.refs != nil {
			_, env, reason = r.total(*tc.refs)
		} else {
			env, reason = create(tc.total())
		}
		if env.OK || env.Error == nil || env.Error.Code != toolkit.Forbidden || reason != tc.reason {
			t.Errorf("%s: ok=%v error %+v, want FORBIDDEN %s", tc.name, env.OK, env.Error, tc.reason)
		}
	}
	s.mustHaveNoDrafts(t)
	if env, reason := create(genuine); !env.OK || reason != "" {
		t.Fatalf("the genuine total was refused: %+v", env.Error)
	}
	var reserved int
	if err := s.Pool.QueryRow(context.Background(), `SELECT reserved FROM catalog_warehouse_stock WHERE sku = $1 AND warehouse = 'US'`,
		jacket[0].SKU).Scan(&reserved); err != nil || reserved != 1 {
		t.Fatalf("US reserved %d (%v), want 1", reserved, err)
	}
}
