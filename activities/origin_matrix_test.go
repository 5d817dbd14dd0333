package activities_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/commerce/rules/shipping"
	"github.com/cartwright-dev/cartwright/commerce/rules/tax"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// The origin matrix (docs/tools.md#origin-choice): every warehouse ×
// every destination of the rule data × every shipping service, and the
// split case to every destination, through Quote on the real invoker (input and output schemas, evidence) and store.
// Stock is set so that the warehouse under test is the only one holding
// the basket: the choice must name it, the round must reach a total (or a
// business refusal) shipped from it, and the landed cost the choice
// compared must be what the total charges (at checkout and on delivery).

// holdOnlyIn leaves sku's stock in warehouse alone (qty units).
func (c *commerceEnv) holdOnlyIn(t *testing.T, sku, warehouse string, qty int) {
	t.Helper()
	de := 0
	if warehouse == commerce.DefaultWarehouse {
		de = qty
	}
	if _, err := c.pool.Exec(t.Context(), `UPDATE catalog_stock SET on_hand = $2, reserved = 0 WHERE sku = $1`, sku, de); err != nil {
		t.Fatal(err)
	}
	if _, err := c.pool.Exec(t.Context(), `UPDATE catalog_warehouse_stock SET on_hand = CASE WHEN warehouse = $2 THEN $3 ELSE 0 END,
		reserved = 0 WHERE sku = $1`, sku, warehouse, qty); err != nil {
		t.Fatal(err)
	}
	if warehouse != commerce.DefaultWarehouse {
		if _, err := c.pool.Exec(t.Context(), `INSERT INTO catalog_warehouse_stock (sku, warehouse, on_hand) VALUES ($1, $2, $3)
			ON CONFLICT (sku, warehouse) DO UPDATE SET on_hand = $3, reserved = 0`, sku, warehouse, qty); err != nil {
			t.Fatal(err)
		}
	}
}

// originRoundInput is roundInput to dest by service.
func originRoundInput(dest commerce.Address, service string, items ...commerce.LineItem) activities.QuoteInput {
	in := roundInput(items...)
	in.Order.ShipTo, in.Order.ShippingService = dest, service
	if in.Order.Currency = tax.Currency(dest.Country); in.Order.Currency == "" {
		in.Order.Currency = "EUR"
	}
	return in
}

// checkOriginRound checks one round against the origins it must choose
// and returns how it ended.
func checkOriginRound(t *testing.T, what string, res activities.QuoteResult, want []string) string {
	t.Helper()
	if len(res.Calls) == 0 || res.Calls[0].Tool != commerce.ToolChooseOrigins {
		t.Errorf("%s: the round did not choose its origin first: %v", what, res.Calls)
		return "none"
	}
	for _, call := range res.Calls {
		if call.Envelope.SnapshotID() == "" {
			t.Errorf("%s: %s without evidence", what, call.Tool)
		}
		if !call.Envelope.OK && !slices.Contains([]toolkit.Code{toolkit.AddressInvalid, toolkit.ComplianceBlocked}, call.Envelope.Error.Code) {
			t.Errorf("%s: %s refused %s: %s", what, call.Tool, call.Envelope.Error.Code, call.Envelope.Error.Message)
		}
	}
	var plan commerce.OriginPlan
	if first := res.Calls[0].Envelope; !first.OK {
		return "refused " + string(first.Error.Code)
	} else if err := first.Decode(&plan); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !slices.Equal(plan.Origins(), want) || plan.Split != (len(want) > 1) {
		t.Errorf("%s: chose %v (split %v), want %v", what, plan.Origins(), plan.Split, want)
	}
	if err := commerce.VerifyOriginPlan(plan); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	last := res.Calls[len(res.Calls)-1]
	if last.Tool != commerce.ToolComputeTotal || !last.Envelope.OK {
		if last.Envelope.OK && last.Tool == commerce.ToolCheckCompliance {
			return "review"
		}
		if !last.Envelope.OK {
			return "refused " + string(last.Envelope.Error.Code)
		}
		t.Errorf("%s: the round stopped after %s", what, last.Tool)
		return "stopped"
	}
	var total commerce.Total
	if err := last.Envelope.Decode(&total); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(want) == 1 && total.ShipFrom != want[0] {
		t.Errorf("%s: total ships from %s, want %s", what, total.ShipFrom, want[0])
	}
	if len(want) > 1 && len(total.Parcels) != len(want) {
		t.Errorf("%s: total of %d parcels, want %d", what, len(total.Parcels), len(want))
	}
	if charged := total.GrandTotal.Amount + total.DueOnDelivery.Amount; charged != plan.Landed.Total.Amount {
		t.Errorf("%s: the total charges %d (checkout + delivery), the choice compared a landed cost of %d", what, charged, plan.Landed.Total.Amount)
	}
	return "total"
}

func TestOriginMatrix(t *testing.T) {
	c := newCommerceEnv(t)
	tee := commerce.LineItem{SKU: "TEE-ORG-M-WHT", Quantity: 1}
	outcomes := map[string]int{}
	calls := 0
	run := func(what string, in activities.QuoteInput, want []string) {
		res, err := c.quoteAs(t, what, in)
		if err != nil {
			t.Errorf("%s: the quote failed: %v", what, err)
			return
		}
		calls += len(res.Calls)
		outcomes[checkOriginRound(t, what, res, want)]++
	}
	dests := roundDestinations(t)
	for _, w := range shipping.Origins() {
		c.holdOnlyIn(t, tee.SKU, w, 100)
		for _, dest := range dests {
			for _, service := range shipping.Services() {
				run(fmt.Sprintf("%s→%s-%s-%s", w, dest.Country, dest.Region, service), originRoundInput(dest, service, tee), []string{w})
			}
		}
	}
	// The split: the tee only in the US, the sweater only in GB.
	sweater := commerce.LineItem{SKU: "SWT-MERINO-L-NVY", Quantity: 1}
	c.holdOnlyIn(t, tee.SKU, "US", 100)
	c.holdOnlyIn(t, sweater.SKU, "GB", 100)
	for _, dest := range dests {
		run(fmt.Sprintf("GB+US→%s-%s", dest.Country, dest.Region), originRoundInput(dest, commerce.ServiceStandard, tee, sweater), []string{"GB", "US"})
	}
	if n := c.snapshots(t); n != calls {
		t.Errorf("%d snapshots for %d calls", n, calls)
	}
	if outcomes["total"] < len(shipping.Origins())*len(shipping.Services())*20 || outcomes["refused "+string(toolkit.ComplianceBlocked)] == 0 {
		t.Errorf("outcomes %v: the matrix must reach totals and refusals", outcomes)
	}
	t.Logf("origin rounds: %v, %d calls", outcomes, calls)
}
