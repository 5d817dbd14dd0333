package client

import (
	"context"
	"errors"
	"strings"

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

// RefundRequest asks for a refund of a paid draft order.
type RefundRequest struct {
	// Key names the refund (8–128 of A-Z a-z 0-9 . _ : -): the same key
	// reaches the same refund run, never a second refund.
	Key string
	// Lines to refund; none refunds the whole order (what is left).
	Lines []commerce.LineItem
	// Reason is shown to the staff who decide a large refund.
	Reason string
	// Request is the caller's envelope (user, actor); its idempotency key
	// is set to Key.
	Request toolkit.Request
}

// Refund starts (or attaches to) the refund run of req.Key for a paid
// draft order and waits up to the context for its end: a refund above
// the configured amount waits for staff (role refunds or admin), whose
// pending approval RefundStatus shows.
func (c *Client) Refund(ctx context.Context, draftOrderWorkflowID string, req RefundRequest) (draftorder.RefundResult, error) {
	var res draftorder.RefundResult
	if err := checkDraftOrderID(draftOrderWorkflowID); err != nil {
		return res, err
	}
	if err := workflows.CheckKey("refund key", req.Key); err != nil {
		return res, errf(toolkit.InvalidArgument, "%v", err)
	}
	st, err := c.OrderStatus(ctx, draftOrderWorkflowID)
	if err != nil {
		return res, err
	}
	id := commerce.RefundWorkflowID(draftOrderWorkflowID, req.Key)
	in := draftorder.RefundInput{Request: req.Request, DraftOrderID: st.DraftOrderID, Lines: req.Lines, Reason: req.Reason,
		ApproveAbove: c.defaults.RefundApprovalAbove, ApprovalWindow: c.defaults.ApprovalWindow}
	in.Request.IdempotencyKey = req.Key
	if in.Request.UserID == "" {
		// The draft order's user: draft-order/{user_id}/{key}.
		in.Request.UserID = strings.SplitN(strings.TrimPrefix(draftOrderWorkflowID, workflows.DraftOrderIDPrefix), "/", 2)[0]
	}
	if in.Request.RequestID == "" {
		in.Request.RequestID = "req-" + req.Key
	}
	opts := workflows.OnceStartOptions(id, c.taskQueue, workflows.FlowOrderSettle, "PRICING", "refund of "+st.DraftOrderID)
	run, err := c.tc.ExecuteWorkflow(ctx, opts, draftorder.RefundWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		// This key's refund ran already: its result, never a second one.
		return res, c.tc.GetWorkflow(ctx, id, "").Get(ctx, &res)
	}
	if err != nil {
		return res, c.wrap(err, id, "start the refund")
	}
	return res, run.Get(ctx, &res)
}
