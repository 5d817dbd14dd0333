package draftorder

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// settleStock is checkout.settle_stock as the ledger keeps a hold: the
// first settle moves, a repeat of the same action answers replayed, the
// other action CONFLICT.
func (f *fixture) settleStock(_ context.Context, in flowtest.ToolIn[commerce.SettleStockArgs]) (flowtest.ToolOut[commerce.StockSettlement], error) {
	if err := f.Enter("SettleStock", in); err != nil {
		return flowtest.ToolOut[commerce.StockSettlement]{}, err
	}
	want := map[string]string{commerce.StockCommit: "committed", commerce.StockRelease: "released"}[in.Args.Action]
	replayed := f.held != ""
	if replayed && f.held != want {
		return flowtest.ToolOut[commerce.StockSettlement]{}, toolkitError(toolkit.Conflict, "already "+f.held)
	}
	if !replayed {
		f.held = want
		f.moves++
	}
	return flowtest.ToolOut[commerce.StockSettlement]{Data: commerce.StockSettlement{DraftOrderID: in.Args.DraftOrderID, State: want,
		Reason: in.Args.Reason, Lines: []commerce.Reservation{{SKU: "SKU-HEADPHONES", Warehouse: "DE", Quantity: 2}}, Replayed: replayed},
		Envelope: f.EnvelopeFor(commerce.ToolSettleStock, toolkit.StatusOK)}, nil
}

// heldOrder is a fixture whose order is confirmed a minute in, so the
// draft is written (do_01TEST, held for 24 h) and the run goes on holding it.
func heldOrder(t *testing.T) *fixture {
	f := newFixture(t)
	f.At(time.Minute, f.confirmPublished)
	return f
}

func toolkitError(code toolkit.Code, msg string) error {
	return activities.ApplicationError(toolkit.Errorf(code, "%s", msg))
}

// A hold nobody ends gives its stock back when it ends, once, in the
// draft order's own run, whose result stays the draft's.
func TestSettleHoldEndsReleasesOnce(t *testing.T) {
	f := heldOrder(t)
	var holding Status
	f.At(2*time.Minute, func() { holding = f.status() })
	out := f.run()
	res := out.Settled
	if out.State != StateDraftCreated || res == nil || res.State != StateExpired || res.Stock == nil ||
		res.Stock.Reason != commerce.ReasonHoldExpired || f.moves != 1 {
		t.Fatalf("result %+v, settled %+v, %d moves", out, res, f.moves)
	}
	if len(res.Evidence) != 1 || res.Evidence[0].Step != "stock/release" {
		t.Fatalf("evidence %+v", res.Evidence)
	}
	if got := f.Env.Now(); got.Before(flowtest.T0.Add(24 * time.Hour)) {
		t.Fatalf("released at %s, before the hold ended", got)
	}
	if holding.Order == nil || holding.Order.State != StateHolding || !holding.Order.Cancellable || holding.Result == nil ||
		holding.Result.State != StateDraftCreated || holding.Order.DraftOrderID != "do_01TEST" {
		t.Fatalf("status while holding %+v (order %+v)", holding, holding.Order)
	}
}

// A cancel before payment releases at once (not at the hold's end); a
// second cancel, and a cancel after the run decided, change nothing.
func TestSettleCancelReleasesOnce(t *testing.T) {
	f := heldOrder(t)
	f.At(time.Hour, func() { f.Env.SignalWorkflow(SignalCancel, CancelSignal{Reason: "changed my mind"}) })
	f.At(time.Hour+time.Second, func() { f.Env.SignalWorkflow(SignalCancel, nil) })
	res := f.run().Settled
	if res == nil || res.State != StateCancelled || res.Stock == nil || res.Stock.Reason != commerce.ReasonCancelled || f.moves != 1 ||
		f.Count("SettleStock") != 1 {
		t.Fatalf("result %+v, %d moves, %d calls", res, f.moves, f.Count("SettleStock"))
	}
	if got := f.Env.Now(); !got.Before(flowtest.T0.Add(2 * time.Hour)) {
		t.Fatalf("released at %s, want right after the cancel", got)
	}
}

// The cancel_order update answers once the stock is back; after the end
// it is refused unless the order ended cancelled.
func TestSettleCancelUpdate(t *testing.T) {
	f := heldOrder(t)
	var got SettleStatus
	var uerr error
	done := false
	f.At(2*time.Minute, func() {
		f.Env.UpdateWorkflow(UpdateCancelOrder, "u1", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { done, uerr = true, err },
			OnComplete: func(v any, err error) {
				done, uerr = true, err
				if s, ok := v.(SettleStatus); ok {
					got = s
				}
			},
		}, CancelOrderInput{Reason: "test"})
	})
	res := f.run().Settled
	if !done || uerr != nil || got.Result == nil || got.Result.State != StateCancelled || got.Stock == nil || res == nil || res.State != StateCancelled {
		t.Fatalf("update done=%v err=%v status %+v; result %+v", done, uerr, got, res)
	}
}

// Before the draft is written there is nothing to hold: cancel_order is
// refused NOT_FOUND (the cancel signal is the way), and the order goes on.
func TestCancelOrderBeforeWriteRefused(t *testing.T) {
	f := heldOrder(t)
	var uerr error
	f.At(30*time.Second, func() {
		f.Env.UpdateWorkflow(UpdateCancelOrder, "u0", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { uerr = err }, OnComplete: func(any, error) {},
		}, CancelOrderInput{})
	})
	out := f.run()
	if toolkit.CodeOf(uerr) != toolkit.NotFound || out.State != StateDraftCreated || out.Settled == nil || out.Settled.State != StateExpired {
		t.Fatalf("refusal %v; result %+v", uerr, out)
	}
}
