package commerce

import (
	"context"
	"testing"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// A hold ends once (docs/stock.md#a-hold-ends): a release gives the
// units back and a repeat moves nothing; a commit after it is refused; a
// commit of another hold takes the units out of on_hand and reserved; and
// only the draft order's own run may do either.
func TestSettleStockOnce(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := PGDrafts{Pool: e.pool, Signer: evidencetest.Signer(t, evidence.WriterWorker)}
	const wf = "draft-order/u_stock/stock-key-0001"
	d, a := createInput(t, 71, "stock-key-0001")
	d.WorkflowID = wf
	line := d.Total.Lines[0]
	stock := func() (onHand, reserved int) {
		t.Helper()
		if err := e.pool.QueryRow(ctx, `SELECT on_hand, reserved FROM catalog_stock WHERE sku = $1`, line.SKU).Scan(&onHand, &reserved); err != nil {
			t.Fatal(err)
		}
		return
	}
	on0, res0 := stock()
	if got, err := s.Create(ctx, d, a); err != nil || got.Outcome != CreateInserted {
		t.Fatalf("create = %+v, %v", got, err)
	}
	want := 0
	for _, r := range Reservations(d.Total) {
		want += r.Quantity
	}
	if n := countRows(t, e.pool, `SELECT sum(quantity)::int FROM stock_movements WHERE draft_order_id = $1 AND kind = 'reserve'`, d.DraftOrderID); n != want {
		t.Fatalf("%d units in reserve movements, want %d", n, want)
	}
	settle := func(caller, action, reason string) (StockSettlement, error) {
		t.Helper()
		var out StockSettlement
		resp, err := e.inv.Invoke(toolkit.WithCall(ctx, toolkit.CallContext{WorkflowID: caller, RunID: "r", ActivityID: "1"}),
			ToolSettleStock, request("u_stock", "stock-key-0001"), SettleStockArgs{DraftOrderID: d.DraftOrderID, Action: action, Reason: reason})
		if err == nil {
			if derr := resp.Decode(&out); derr != nil {
				t.Fatal(derr)
			}
		}
		return out, err
	}
	// Hostile callers: another order's run, a run named like the settle
	// runs of old, a hand-started tool call, no run at all.
	for _, caller := range []string{"draft-order/u_other/stock-key-0001", "draft-order-settle/u_stock/stock-key-0001", "tool-call/x", ""} {
		_, err := settle(caller, StockRelease, ReasonCancelled)
		wantCode(t, err, toolkit.Forbidden)
	}
	// A commit must say paid, a release must not.
	_, err := settle(wf, StockCommit, ReasonCancelled)
	wantCode(t, err, toolkit.InvalidArgument)
	_, err = settle(wf, StockRelease, ReasonPaid)
	wantCode(t, err, toolkit.InvalidArgument)
	if on, res := stock(); on != on0 || res != res0+line.Quantity {
		t.Fatalf("refused calls moved stock: on_hand %d reserved %d", on, res)
	}

	out, err := settle(wf, StockRelease, ReasonCancelled)
	if err != nil || out.State != "released" || out.Replayed || len(out.Lines) != len(Reservations(d.Total)) {
		t.Fatalf("release = %+v, %v", out, err)
	}
	if on, res := stock(); on != on0 || res != res0 {
		t.Fatalf("after release on_hand %d reserved %d, want %d %d", on, res, on0, res0)
	}
	again, err := settle(wf, StockRelease, ReasonHoldExpired)
	if err != nil || !again.Replayed || again.Reason != ReasonCancelled {
		t.Fatalf("repeat release = %+v, %v", again, err)
	}
	_, err = settle(wf, StockCommit, ReasonPaid)
	wantCode(t, err, toolkit.Conflict)
	if on, res := stock(); on != on0 || res != res0 {
		t.Fatalf("repeat and conflict moved stock: on_hand %d reserved %d", on, res)
	}
	if n := countRows(t, e.pool, `SELECT count(*) FROM draft_orders WHERE draft_order_id = $1 AND status = 'cancelled'`, d.DraftOrderID); n != 1 {
		t.Fatal("the released draft is not cancelled")
	}

	// A paid draft: its units leave on_hand and reserved together.
	const wf2 = "draft-order/u_stock/stock-key-0002"
	d2, a2 := createInput(t, 72, "stock-key-0002")
	d2.WorkflowID = wf2
	if got, err := s.Create(ctx, d2, a2); err != nil || got.Outcome != CreateInserted {
		t.Fatalf("create 2 = %+v, %v", got, err)
	}
	d = d2
	out, err = settle(wf2, StockCommit, ReasonPaid)
	if err != nil || out.State != "committed" {
		t.Fatalf("commit = %+v, %v", out, err)
	}
	if on, res := stock(); on != on0-line.Quantity || res != res0 {
		t.Fatalf("after commit on_hand %d reserved %d, want %d %d", on, res, on0-line.Quantity, res0)
	}
	_, err = settle(wf2, StockRelease, ReasonHoldExpired)
	wantCode(t, err, toolkit.Conflict)
	if n := countRows(t, e.pool, `SELECT count(*) FROM audit_events WHERE tool = $1 AND status = 'success'`, ToolSettleStock); n != 3 {
		t.Fatalf("%d successful settle audits, want 3 (release, its repeat, commit)", n)
	}
}
