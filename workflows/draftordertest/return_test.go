package draftordertest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	cwclient "github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// Returned goods come back once (docs/stock.md#returns): a refund of two
// of three paid units waits for the returned signal; the signal sent
// twice at once moves the two units back on hand once (one restock
// movement per line, the second signal refused into the run's log, the
// ledger's reserved untouched); asking again answers from the return and
// moves nothing. Returning more units than the refund covered, or than
// the order committed, is refused and nothing moves; the run waits on.
// A unit given back outside the ledger's rules (a hand-written restock)
// is named by reconcile as returned twice.
func TestReturnedRestocksOnce(t *testing.T) {
	testenv.Integration(t)
	r := newSettleRig(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	item := commerce.LineItem{SKU: "TOY-PUZ-1000-ALP", Quantity: 3}
	on0, res0 := r.stockOf(ctx, item.SKU, "DE")
	draftID, draft := r.paid(ctx, "return", item)
	if on, res := r.stockOf(ctx, item.SKU, "DE"); on != on0-3 || res != res0 {
		t.Fatalf("after payment: on_hand %d reserved %d, want %d %d", on, res, on0-3, res0)
	}
	c := r.refundClient(ctx, draft.GrandTotal.Amount, draftorder.RestockOnReturn)
	key := uniqueKey("rf-two")
	two := commerce.LineItem{SKU: item.SKU, Quantity: 2}
	st, err := c.Refund(ctx, draftID, cwclient.RefundRequest{Key: key, Lines: []commerce.LineItem{two}, Request: refundUser})
	if err != nil || st.Result == nil || st.Result.State != draftorder.StateRefunded || st.Restock != draftorder.RestockOnReturn {
		t.Fatalf("refund: %+v, %v", st, err)
	}
	id := commerce.RefundWorkflowID(draftID, key)
	// Nothing comes back before the goods do.
	if on, _ := r.stockOf(ctx, item.SKU, "DE"); on != on0-3 {
		t.Fatalf("a refund moved stock: on_hand %d", on)
	}

	// More than the refund covered (and than the order committed): refused,
	// nothing moves, the run waits on.
	if _, err := c.ReturnGoods(ctx, draftID, key, draftorder.ReturnedSignal{Lines: []commerce.LineItem{{SKU: item.SKU, Quantity: 5}}}); code(err) != toolkit.InvalidArgument {
		t.Fatalf("returning 5 of 2 refunded: %v", err)
	}
	if m := r.movements(ctx, draft.DraftOrderID); m["restock"] != 0 {
		t.Fatalf("a refused return moved stock: %v", m)
	}

	// The returned signal twice, at once: one movement.
	var wg sync.WaitGroup
	sent := make(chan error, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent <- r.tc.SignalWorkflow(ctx, id, "", draftorder.SignalReturned, draftorder.ReturnedSignal{Note: "parcel back"})
		}()
	}
	wg.Wait()
	close(sent)
	for err := range sent {
		if err != nil {
			t.Fatalf("a returned signal did not reach the run: %v", err)
		}
	}
	var res draftorder.RefundResult
	if err := r.tc.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Return == nil || res.Return.State != draftorder.ReturnRestocked || len(res.Return.Lines) != 1 ||
		res.Return.Lines[0].Quantity != 2 || res.Return.Lines[0].Warehouse != "DE" || res.Return.Evidence == nil {
		t.Fatalf("return %+v", res.Return)
	}
	if on, got := r.stockOf(ctx, item.SKU, "DE"); on != on0-1 || got != res0 {
		t.Fatalf("after the return: on_hand %d reserved %d, want %d %d", on, got, on0-1, res0)
	}
	if m := r.movements(ctx, draft.DraftOrderID); m["restock"] != 2 || m["commit"] != 3 {
		t.Fatalf("ledger %v", m)
	}
	again, err := c.ReturnGoods(ctx, draftID, key, draftorder.ReturnedSignal{})
	if err != nil || again.Return == nil || again.Return.State != draftorder.ReturnRestocked {
		t.Fatalf("a return asked again: %+v, %v", again, err)
	}
	if on, _ := r.stockOf(ctx, item.SKU, "DE"); on != on0-1 {
		t.Fatalf("a second return moved stock: on_hand %d", on)
	}
	rec, err := r.store.Get(ctx, res.Return.Evidence.SnapshotID)
	if err != nil || rec.Tool != commerce.ToolRestockReturned {
		t.Fatalf("the return's evidence %+v: %v", rec, err)
	}

	// The ledger itself refuses a return beyond what was committed, for
	// any refund run: two units came back, one is left.
	var outcome string
	if err := r.pool.QueryRow(ctx, `SELECT r_outcome FROM stock_restock($1, $2, '[{"sku": "TOY-PUZ-1000-ALP", "quantity": 2}]', 'corr-0000000000000000')`,
		draft.DraftOrderID, commerce.RefundWorkflowID(draftID, uniqueKey("rf-x"))).Scan(&outcome); err != nil || outcome != "too_many" {
		t.Fatalf("stock_restock of 2 with 1 left: %q, %v", outcome, err)
	}
	// A unit given back outside the ledger's rules is named by reconcile.
	if _, err := r.pool.Exec(ctx, `INSERT INTO stock_movements (draft_order_id, kind, sku, warehouse, quantity, reason, correlation_id, refund_run)
		VALUES ($1, 'restock', $2, 'DE', 2, 'returned', 'corr-0000000000000000', $3)`,
		draft.DraftOrderID, item.SKU, commerce.RefundWorkflowID(draftID, uniqueKey("rf-hand"))); err != nil {
		t.Fatal(err)
	}
	rep, err := evidence.Reconcile(ctx, r.pool, evidence.ReconcileOptions{RowKeys: r.store.RowKeys()})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range rep.Violations {
		if v.Invariant == evidence.InvStockReturnedTwice && v.DraftOrderID == draft.DraftOrderID {
			found = strings.Contains(v.Detail, "returned 4") && strings.Contains(v.Detail, "committed 3")
		}
	}
	if !found || rep.StockReturnedTwice == 0 {
		t.Fatalf("reconcile did not name the unit returned twice: %+v", rep.Violations)
	}
}
