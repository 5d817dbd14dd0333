package client

import (
	"context"
	"errors"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// RefundRequest asks for a refund of a paid draft order.
type RefundRequest struct {
	// Key names the refund (8–128 of A-Z a-z 0-9 . _ : -): the same key
	// reaches the same refund run, never a second refund; the same key
	// with other lines is CONFLICT.
	Key string
	// Lines to refund; none refunds the whole order (what is left).
	Lines []commerce.LineItem
	// Reason is shown to the staff who decide a large refund.
	Reason string
	// UntilEnd waits past a staff decision for the refund's end (as long
	// as ctx allows); without it a refund that waits for staff answers
	// AWAITING_APPROVAL with the pending approval at once.
	UntilEnd bool
	// Request is the caller's envelope (user, actor); its idempotency key
	// is set to Key.
	Request toolkit.Request
}

// Refund asks for the refund req.Key of a paid draft order with the
// refund update (docs/payments.md#refunds): an Update-with-Start of the
// refund run, one round trip, answered with where the refund stands —
// REFUNDED with Stripe's refund id; AWAITING_APPROVAL with the approval
// staff (role refunds or admin) decide and the facts they see; REFUND_
// REJECTED or REFUND_EXPIRED with its code in Result. A refund the run's
// first step refuses (not paid, a line not in the order, more units than
// are left unrefunded, another order's refund) is that error
// (INVALID_ARGUMENT, FORBIDDEN, NOT_FOUND), and the key stays free; the
// key used before for other lines is CONFLICT.
func (c *Client) Refund(ctx context.Context, draftOrderWorkflowID string, req RefundRequest) (draftorder.RefundStatus, error) {
	var out draftorder.RefundStatus
	if err := checkDraftOrderID(draftOrderWorkflowID); err != nil {
		return out, err
	}
	if err := workflows.CheckKey("refund key", req.Key); err != nil {
		return out, errf(toolkit.InvalidArgument, "%v", err).WithDetail("fields", []string{"key"})
	}
	st, err := c.OrderStatus(ctx, draftOrderWorkflowID)
	if err != nil {
		return out, err
	}
	id := commerce.RefundWorkflowID(draftOrderWorkflowID, req.Key)
	in := draftorder.RefundInput{Request: req.Request, DraftOrderID: st.DraftOrderID, Lines: req.Lines, Reason: req.Reason,
		ApproveAbove: c.defaults.RefundApprovalAbove, ApprovalWindow: c.defaults.ApprovalWindow,
		Restock: c.defaults.RefundRestock, ReturnWindow: c.defaults.ReturnWindow}
	in.Request.IdempotencyKey = req.Key
	if in.Request.UserID == "" {
		// The draft order's user: draft-order/{user_id}/{key}.
		in.Request.UserID = strings.SplitN(strings.TrimPrefix(draftOrderWorkflowID, workflows.DraftOrderIDPrefix), "/", 2)[0]
	}
	if in.Request.RequestID == "" {
		in.Request.RequestID = "req-" + req.Key
	}
	fp, err := draftorder.RefundFingerprint(in)
	if err != nil {
		return out, errf(toolkit.InvalidArgument, "%v", err)
	}
	opts := workflows.OnceStartOptions(id, c.taskQueue, workflows.FlowOrderSettle, "PRICING", "refund of "+st.DraftOrderID)
	opts.Memo = map[string]any{workflows.MemoInputFingerprint: fp}
	uh, err := c.tc.UpdateWithStartWorkflow(ctx, sdkclient.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: c.tc.NewWithStartWorkflowOperation(opts, draftorder.RefundWorkflowName, in),
		UpdateOptions: sdkclient.UpdateWorkflowOptions{
			UpdateName: draftorder.UpdateRefund, Args: []any{draftorder.RefundAsk{Refund: &in, UntilEnd: req.UntilEnd}},
			WaitForStage: sdkclient.WorkflowUpdateStageCompleted,
		},
	})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		// This key's refund ran to its end already: its result, never a
		// second refund, and only for the same lines.
		return c.closedRefund(ctx, Handle{WorkflowID: id, RunID: started.RunId}, req.Key, fp)
	}
	if err == nil {
		err = uh.Get(ctx, &out)
	}
	if err = c.updateError(ctx, err, id, "refund"); errors.Is(err, errRunClosed) {
		return c.closedRefund(ctx, Handle{WorkflowID: id}, req.Key, fp)
	}
	return out, err
}

// closedRefund answers from refund run h that already ended: CONFLICT
// when it was another refund (its memo's fingerprint), else its result
// (or the refusal it ended canceled with).
func (c *Client) closedRefund(ctx context.Context, h Handle, key, fp string) (draftorder.RefundStatus, error) {
	var out draftorder.RefundStatus
	desc, err := c.describe(ctx, h)
	if err != nil {
		return out, err
	}
	got, err := c.startFingerprint(ctx, h, desc, func(p *commonpb.Payloads) (string, error) {
		var in draftorder.RefundInput
		if err := c.dc.FromPayloads(p, &in); err != nil {
			return "", err
		}
		return draftorder.RefundFingerprint(in)
	})
	if err != nil {
		return out, err
	}
	if got != fp {
		return out, errf(toolkit.Conflict, "refund key %s was already used for another refund (other lines or another order); "+
			"use a new key for a new refund", key).WithDetail("reason", "arguments differ").WithDetail("idempotency_key", key).
			WithDetail("workflow_id", h.WorkflowID).WithDetail("fields", []string{"key"})
	}
	var res draftorder.RefundResult
	if err := c.tc.GetWorkflow(ctx, h.WorkflowID, h.RunID).Get(ctx, &res); err != nil {
		return out, c.wrap(err, h.WorkflowID, "read the refund")
	}
	return draftorder.RefundStatus{State: res.State, Result: &res, Return: res.Return}, nil
}

// RefundStatus is the refund run req key's status: where the refund
// stands, the approval it waits for, the return.
func (c *Client) RefundStatus(ctx context.Context, draftOrderWorkflowID, key string) (draftorder.RefundStatus, error) {
	var st draftorder.RefundStatus
	if err := checkDraftOrderID(draftOrderWorkflowID); err != nil {
		return st, err
	}
	id := commerce.RefundWorkflowID(draftOrderWorkflowID, key)
	v, err := c.tc.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	if err != nil {
		return st, c.wrap(err, id, "query the refund")
	}
	return st, v.Get(&st)
}

// ReturnGoods tells the refund run of key that goods came back (the
// returned signal, docs/stock.md#returns; lines none: every line it
// refunded) and waits, as long as ctx allows, until the run took it: the
// units back on hand (Return.State restocked), or the refusal it showed
// (more than was committed, lines it did not refund). A return recorded
// before answers from it: a unit comes back once.
func (c *Client) ReturnGoods(ctx context.Context, draftOrderWorkflowID, key string, sig draftorder.ReturnedSignal) (draftorder.RefundStatus, error) {
	before, err := c.RefundStatus(ctx, draftOrderWorkflowID, key)
	if err != nil {
		return before, err
	}
	switch {
	case before.Return != nil && before.Return.State != draftorder.ReturnAwaiting:
		return before, nil
	case before.Restock != draftorder.RestockOnReturn:
		return before, errf(toolkit.Conflict, "refund %s never restocks (CARTWRIGHT_REFUND_RESTOCK=%s)", key, before.Restock).
			WithDetail("reason", "never_restocks")
	case before.Result == nil || before.Result.State != draftorder.StateRefunded:
		return before, errf(toolkit.Conflict, "refund %s is %s, not refunded: nothing to return yet", key, before.State).
			WithDetail("state", before.State)
	}
	tries := 0
	if before.Return != nil {
		tries = before.Return.Tries
	}
	id := commerce.RefundWorkflowID(draftOrderWorkflowID, key)
	if err := c.tc.SignalWorkflow(ctx, id, "", draftorder.SignalReturned, sig); err != nil {
		return before, c.closedOrMissing(ctx, err, id, "signal returned to")
	}
	for {
		st, err := c.RefundStatus(ctx, draftOrderWorkflowID, key)
		if err != nil {
			return st, err
		}
		if r := st.Return; r != nil {
			if r.State != draftorder.ReturnAwaiting {
				return st, nil
			}
			if r.Tries > tries && r.LastRefusal != nil {
				// The run tried this return and the tool refused it; the
				// run waits on for a correct one.
				return st, r.LastRefusal
			}
		}
		select {
		case <-ctx.Done():
			return st, errf(toolkit.Timeout, "refund %s did not take the return before the deadline", key)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
