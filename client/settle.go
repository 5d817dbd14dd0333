package client

import (
	"context"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// OrderStatus is the written draft order's hold: holding or awaiting
// payment, paid, cancelled, payment failed or expired, with the payment
// (its status, amount, fee and where the client secret is) and the stock
// movement (docs/stock.md). The draft order's own run holds it, so this is
// its status query's order; NOT_FOUND before the draft order was written.
func (c *Client) OrderStatus(ctx context.Context, draftOrderWorkflowID string) (draftorder.SettleStatus, error) {
	st, err := c.Status(ctx, draftOrderWorkflowID)
	if err != nil {
		return draftorder.SettleStatus{}, err
	}
	if st.Order == nil {
		return draftorder.SettleStatus{}, errf(toolkit.NotFound, "%s has no written draft order yet (state %s)", draftOrderWorkflowID, st.State).
			WithDetail("state", st.State)
	}
	return *st.Order, nil
}

// CancelOrder cancels a written draft order before it is paid and
// returns once its stock is back (the cancel_order update). A repeat
// answers from the result; an order paid (or otherwise ended) first is
// CONFLICT with its state.
func (c *Client) CancelOrder(ctx context.Context, draftOrderWorkflowID, reason string) (draftorder.SettleStatus, error) {
	var st draftorder.SettleStatus
	if err := checkDraftOrderID(draftOrderWorkflowID); err != nil {
		return st, err
	}
	err := c.update(ctx, draftOrderWorkflowID, draftorder.UpdateCancelOrder, draftorder.CancelOrderInput{Reason: reason}, &st)
	if err == nil {
		return st, nil
	}
	// The run may have ended (cancelled by an earlier call, or otherwise):
	// its status says how.
	done, qerr := c.OrderStatus(ctx, draftOrderWorkflowID)
	if qerr != nil || done.Result == nil {
		return st, err
	}
	if done.Result.State == draftorder.StateCancelled {
		return done, nil
	}
	return done, errf(toolkit.Conflict, "%s was not cancelled: it ended %s (%s)", draftOrderWorkflowID, done.Result.State, done.Result.Message).
		WithDetail("state", done.Result.State)
}
