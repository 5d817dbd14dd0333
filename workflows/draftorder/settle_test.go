package draftorder

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// settleFixture runs Flow.Settle with a fake checkout.settle_stock
// that keeps the hold as the ledger does: the first settle moves, a
// repeat of the same action answers replayed, the other action CONFLICT.
type settleFixture struct {
	flowtest.FakeEnv
	in    SettleInput
	state string
	moves int
}

func newSettleFixture(t *testing.T, hold time.Duration) *settleFixture {
	f := &settleFixture{}
	f.Init(t, "draft-order-settle/u_123/key-0001-abcd", "ev_settle_")
	f.Env.RegisterWorkflowWithOptions(Flow{Specs: flow.NewToolSpecs(flowtest.TestSpecs())}.Settle, workflow.RegisterOptions{Name: SettleWorkflowName})
	f.FakeTools(map[string]any{commerce.ToolSettleStock: f.settleStock})
	f.in = SettleInput{
		Request: toolkit.Request{RequestID: "req-test", UserID: "u_123", IdempotencyKey: "key-0001-abcd", Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: "u_123"}},
		DraftOrder: commerce.DraftOrder{DraftOrderID: "do_01JD0000000000000000000000", Status: "open", ExpiresAt: flowtest.T0.Add(hold),
			GrandTotal: commerce.Money{Amount: 5000, Currency: "EUR"}},
	}
	return f
}

func (f *settleFixture) settleStock(_ context.Context, in flowtest.ToolIn[commerce.SettleStockArgs]) (flowtest.ToolOut[commerce.StockSettlement], error) {
	if err := f.Enter("SettleStock", in); err != nil {
		return flowtest.ToolOut[commerce.StockSettlement]{}, err
	}
	want := map[string]string{commerce.StockCommit: "committed", commerce.StockRelease: "released"}[in.Args.Action]
	replayed := f.state != ""
	if replayed && f.state != want {
		return flowtest.ToolOut[commerce.StockSettlement]{}, toolkitError(toolkit.Conflict, "already "+f.state)
	}
	if !replayed {
		f.state = want
		f.moves++
	}
	return flowtest.ToolOut[commerce.StockSettlement]{Data: commerce.StockSettlement{DraftOrderID: in.Args.DraftOrderID, State: want,
		Reason: in.Args.Reason, Lines: []commerce.Reservation{{SKU: "SKU-HEADPHONES", Warehouse: "DE", Quantity: 2}}, Replayed: replayed},
		Envelope: f.EnvelopeFor(commerce.ToolSettleStock, toolkit.StatusOK)}, nil
}

func toolkitError(code toolkit.Code, msg string) error {
	return activities.ApplicationError(toolkit.Errorf(code, "%s", msg))
}

// A hold nobody ends gives its stock back when it ends, once.
func TestSettleHoldEndsReleasesOnce(t *testing.T) {
	f := newSettleFixture(t, 24*time.Hour)
	res := flowtest.RunWorkflow[SettleResult](&f.FakeEnv, SettleWorkflowName, f.in)
	if res.State != StateExpired || res.Stock == nil || res.Stock.Reason != commerce.ReasonHoldExpired || f.moves != 1 {
		t.Fatalf("result %+v, %d moves", res, f.moves)
	}
	if len(res.Evidence) != 1 || res.Evidence[0].Step != "stock/release" {
		t.Fatalf("evidence %+v", res.Evidence)
	}
}

// A cancel before payment releases at once (not at the hold's end); a
// second cancel, and a cancel after the run decided, change nothing.
func TestSettleCancelReleasesOnce(t *testing.T) {
	f := newSettleFixture(t, 24*time.Hour)
	f.At(time.Hour, func() { f.Env.SignalWorkflow(SignalCancel, CancelSignal{Reason: "changed my mind"}) })
	f.At(time.Hour+time.Second, func() { f.Env.SignalWorkflow(SignalCancel, nil) })
	res := flowtest.RunWorkflow[SettleResult](&f.FakeEnv, SettleWorkflowName, f.in)
	if res.State != StateCancelled || res.Stock == nil || res.Stock.Reason != commerce.ReasonCancelled || f.moves != 1 ||
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
	f := newSettleFixture(t, 24*time.Hour)
	var got SettleStatus
	var uerr error
	done := false
	f.At(time.Minute, func() {
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
	res := flowtest.RunWorkflow[SettleResult](&f.FakeEnv, SettleWorkflowName, f.in)
	if !done || uerr != nil || got.Result == nil || got.Result.State != StateCancelled || got.Stock == nil || res.State != StateCancelled {
		t.Fatalf("update done=%v err=%v status %+v; result %+v", done, uerr, got, res)
	}
}
