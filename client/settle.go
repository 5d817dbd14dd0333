package client

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// SettleID is the id of the settle run of a draft order
// (docs/stock.md#the-settle-run): where its stock hold, payment and
// cancel after the write live.
func SettleID(draftOrderWorkflowID string) (string, error) {
	if err := checkDraftOrderID(draftOrderWorkflowID); err != nil {
		return "", err
	}
	return commerce.SettleWorkflowID(draftOrderWorkflowID), nil
}

// OrderStatus is the written draft order's settle status: holding or
// awaiting payment, paid, cancelled, payment failed or expired, with the
// payment (its status, amount, fee and where the client secret is) and
// the stock movement. NOT_FOUND before the draft order was written.
func (c *Client) OrderStatus(ctx context.Context, draftOrderWorkflowID string) (draftorder.SettleStatus, error) {
	var st draftorder.SettleStatus
	id, err := SettleID(draftOrderWorkflowID)
	if err != nil {
		return st, err
	}
	v, err := c.tc.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return st, errf(toolkit.NotFound, "%s has no written draft order yet", draftOrderWorkflowID).WithCause(err)
		}
		return st, c.wrap(err, id, "query the settle status of")
	}
	return st, v.Get(&st)
}

// CancelOrder cancels a written draft order before it is paid and
// returns once its stock is back (the cancel_order update). A repeat
// answers from the result; an order paid (or otherwise ended) first is
// CONFLICT with its state.
func (c *Client) CancelOrder(ctx context.Context, draftOrderWorkflowID, reason string) (draftorder.SettleStatus, error) {
	var st draftorder.SettleStatus
	id, err := SettleID(draftOrderWorkflowID)
	if err != nil {
		return st, err
	}
	err = c.update(ctx, id, draftorder.UpdateCancelOrder, draftorder.CancelOrderInput{Reason: reason}, &st)
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
