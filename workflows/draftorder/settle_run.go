package draftorder

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
)

// run waits until the hold ends (a cancel, or its time), then moves the
// stock once.
func (s *settle) run(ctx workflow.Context) (SettleResult, error) {
	action, reason, state, msg, err := s.awaitDecision(ctx)
	if err != nil {
		return SettleResult{}, err
	}
	s.deciding = true
	if err := s.setState(ctx, StateSettling); err != nil {
		return SettleResult{}, err
	}
	if err := s.settleStock(ctx, action, reason); err != nil {
		return SettleResult{}, err
	}
	return s.finish(ctx, state, msg)
}

// awaitDecision waits for what ends the hold: a cancel, or the hold's
// end (the draft's expires_at, from the hold window of the write).
func (s *settle) awaitDecision(ctx workflow.Context) (action, reason, state, msg string, err error) {
	deadline := s.in.DraftOrder.ExpiresAt
	for {
		if s.cancelled {
			return commerce.StockRelease, commerce.ReasonCancelled, StateCancelled, "cancelled by the user before payment", nil
		}
		left := deadline.Sub(workflow.Now(ctx))
		if left <= 0 {
			return commerce.StockRelease, commerce.ReasonHoldExpired, StateExpired, "not paid before the hold ended", nil
		}
		if _, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
			Timeout: left, TimerOptions: workflow.TimerOptions{Summary: "stock hold"},
		}, func() bool { return s.cancelled }); err != nil {
			return "", "", "", "", err
		}
	}
}

// settleStock commits or releases the draft's stock
// (checkout.settle_stock, retried until the ledger answers: the stock
// must move, docs/stock.md#a-hold-ends).
func (s *settle) settleStock(ctx workflow.Context, action, reason string) error {
	step := "stock/" + action
	got, env, err := flow.CallTool[commerce.StockSettlement](ctx, s.specs, flow.Call{
		Tool:    commerce.ToolSettleStock,
		Req:     flow.Envelope(ctx, s.in.Request, step),
		Args:    commerce.SettleStockArgs{DraftOrderID: s.in.DraftOrder.DraftOrderID, Action: action, Reason: reason},
		Summary: fmt.Sprintf("%s: %s (%s)", commerce.ToolSettleStock, action, reason),
	}).Get(ctx)
	if err != nil {
		return err
	}
	s.evidence = append(s.evidence, workflows.EvidenceRefOf(step, env))
	s.stock = &got
	return nil
}

// finish records the result and publishes the final state.
func (s *settle) finish(ctx workflow.Context, state, msg string) (SettleResult, error) {
	res := &SettleResult{State: state, Message: msg, DraftOrderID: s.in.DraftOrder.DraftOrderID, Stock: s.stock,
		Evidence: append([]workflows.EvidenceRef{}, s.evidence...)}
	s.result = res
	if err := s.setState(ctx, state); err != nil {
		return *res, err
	}
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("**Draft order %s %s**: %s", s.in.DraftOrder.DraftOrderID, state, msg))
	return *res, nil
}
