package client_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// reserved reads the stock a warehouse has reserved for sku.
func reserved(t *testing.T, s *wiringtest.Stack, sku, warehouse string) int {
	t.Helper()
	q := `SELECT reserved FROM catalog_warehouse_stock WHERE sku = $1 AND warehouse = $2`
	args := []any{sku, warehouse}
	if warehouse == commerce.DefaultWarehouse {
		q, args = `SELECT reserved FROM catalog_stock WHERE sku = $1`, []any{sku}
	}
	var n int
	if err := s.Pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("reserved %s in %s: %v", sku, warehouse, err)
	}
	return n
}

// confirmOrder starts in, waits for its total, checks it with check and
// confirms it; it returns the result.
func confirmOrder(t *testing.T, c *client.Client, in draftorder.Input, check func(draftorder.Status)) draftorder.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	h, err := c.StartDraftOrder(ctx, in)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	st, err := c.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || st.Confirmation == nil {
		t.Fatalf("wait for the total: %+v, %v", st, err)
	}
	check(st)
	if err := c.Confirm(ctx, h.WorkflowID, st.Confirmation.QuoteHash); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil || res.State != draftorder.StateDraftCreated {
		t.Fatalf("result: %+v, %v", res, err)
	}
	return res
}

// The down jacket is sold out in DE and held in the US: a New York
// customer's order is quoted from the US warehouse, a domestic sale with
// no import duty, and the draft takes its unit from the US stock.
func TestDraftOrderShipsFromTheWarehouseThatHoldsIt(t *testing.T) {
	c, s := newClient(t)
	in := order(key("origin-us"), commerce.LineItem{SKU: "JKT-DOWN-M-BLK", Quantity: 1})
	in.Request.Currency = "USD"
	in.ShipTo = commerce.Address{Name: "Jane Doe", Line1: "350 5th Ave", City: "New York", Region: "NY", PostalCode: "10118", Country: "US"}
	res := confirmOrder(t, c, in, func(st draftorder.Status) {
		o := st.Origins
		if o == nil || !slices.Equal(o.Origins, []string{"US"}) || o.Split || o.SnapshotID == "" {
			t.Fatalf("origins %+v, want the US alone, evidenced", o)
		}
		if st.Total.ShipFrom != "US" || st.Total.Duty.Amount != 0 {
			t.Fatalf("total from %s with duty %v, want US and no import duty", st.Total.ShipFrom, st.Total.Duty)
		}
		for _, cand := range o.Candidates {
			switch cand.Origins[0] {
			case "DE":
				if cand.Rejected != commerce.RejectOutOfStock {
					t.Fatalf("DE: %+v, want out of stock", cand)
				}
			case "GB":
				if cand.Rejected != commerce.RejectCostlier || cand.Landed.Total.Amount <= o.Landed.Total.Amount {
					t.Fatalf("GB: %+v, want costlier than %v", cand, o.Landed.Total)
				}
			}
		}
	})
	if res.Origins == nil || res.Total.ShipFrom != "US" {
		t.Fatalf("result origins %+v, total from %s", res.Origins, res.Total.ShipFrom)
	}
	if got := reserved(t, s, "JKT-DOWN-M-BLK", "US"); got != 1 {
		t.Fatalf("US reserved %d jacket(s), want 1", got)
	}
}

// A basket no warehouse holds alone is one draft order of two parcels:
// one total, one confirmation, each parcel with its own shipping, duty and
// tax, and each warehouse's stock taken.
func TestDraftOrderSplitsIntoParcels(t *testing.T) {
	c, s := newClient(t)
	basket := []commerce.LineItem{{SKU: "JKT-DOWN-M-BLK", Quantity: 1}, {SKU: "COF-ETH-YIR-1KG", Quantity: 1}, {SKU: "KNF-SANTOKU-18", Quantity: 1}}
	in := order(key("origin-split"), basket...)
	in.ShipTo = commerce.Address{Name: "Jean Dupont", Line1: "12 Rue de Rivoli", City: "Paris", PostalCode: "75001", Country: "FR"}
	res := confirmOrder(t, c, in, func(st draftorder.Status) {
		if st.Origins == nil || !st.Origins.Split || len(st.Origins.Parcels) != 2 || len(st.Total.Parcels) != 2 {
			t.Fatalf("origins %+v, total parcels %d: want two parcels", st.Origins, len(st.Total.Parcels))
		}
	})
	if res.DraftOrder == nil || len(res.Total.Parcels) != 2 {
		t.Fatalf("result %+v", res)
	}
	for _, p := range res.Total.Parcels {
		for _, it := range p.Items {
			if got := reserved(t, s, it.SKU, p.ShipFrom); got != it.Quantity {
				t.Fatalf("%s reserved %d of %s, want %d", p.ShipFrom, got, it.SKU, it.Quantity)
			}
		}
	}
}

// Twenty orders for the last ten units: each was quoted with stock, all
// confirm at once, and the write takes the stock atomically: exactly ten
// drafts and ten OUT_OF_STOCK, never an eleventh unit.
func TestDraftOrderLastUnitsRace(t *testing.T) {
	c, s := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(4*time.Minute))
	defer cancel()
	const sku = "TEE-ORG-M-WHT"
	for _, q := range []string{`UPDATE catalog_stock SET on_hand = 10, reserved = 0 WHERE sku = $1`,
		`UPDATE catalog_warehouse_stock SET on_hand = 0, reserved = 0 WHERE sku = $1`} {
		if _, err := s.Pool.Exec(ctx, q, sku); err != nil {
			t.Fatal(err)
		}
	}
	const n = 20
	ids := make([]string, n)
	hashes := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := c.StartDraftOrder(ctx, order(key("race"), commerce.LineItem{SKU: sku, Quantity: 1}))
			if err != nil {
				errs <- err
				return
			}
			st, err := c.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(2*time.Minute)))
			if err != nil || st.Confirmation == nil {
				errs <- toolkit.Errorf(toolkit.Timeout, "order %d: no total: %+v %v", i, st.State, err)
				return
			}
			ids[i], hashes[i] = h.WorkflowID, st.Confirmation.QuoteHash
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every order was quoted with stock; now all confirm at once.
	states := make([]string, n)
	wg = sync.WaitGroup{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A confirm the write refused answers that the run ended
			// (CONFLICT naming its state); the result says which.
			_ = c.Confirm(ctx, ids[i], hashes[i])
			res, err := c.WaitResult(ctx, ids[i], time.Now().Add(testenv.Deadline(2*time.Minute)))
			if err != nil {
				states[i] = "result: " + err.Error()
				return
			}
			states[i] = res.State
		}()
	}
	wg.Wait()
	count := map[string]int{}
	for _, st := range states {
		count[st]++
	}
	if count[draftorder.StateDraftCreated] != 10 || count[draftorder.StateOutOfStock] != 10 {
		t.Fatalf("outcomes %v, want 10 %s and 10 %s", count, draftorder.StateDraftCreated, draftorder.StateOutOfStock)
	}
	if got := reserved(t, s, sku, "DE"); got != 10 {
		t.Fatalf("DE reserved %d, want 10", got)
	}
	t.Logf("outcomes %v", count)
}
