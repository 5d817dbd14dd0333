package client

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// Handle names a started (or found) workflow run.
type Handle struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	// Attached is true when no new run was started: a run with this id was
	// already running, or had already completed (the key is spent and this
	// is its run, whose result WaitResult returns). A failed run does not
	// hold its key: the next start begins a new run.
	Attached bool `json:"attached"`
}

// DraftOrderHandle is what StartDraftOrder returns: the run, and its first
// answer.
type DraftOrderHandle struct {
	Handle
	// Status is the draft order as it first needs someone: the published
	// total to confirm (Confirmation), the staff decision it waits for
	// (Approvals.Pending), or its end (Result). It comes back with the
	// start, in one round trip (Update-with-Start).
	Status draftorder.Status `json:"status"`
}

// ApprovalDecision is a support-staff decision for Approve and Reject.
// Who decides is not a field: it is whoever Sealer authenticates
// (docs/approvals.md#sealed-decisions).
type ApprovalDecision struct {
	// ApprovalID is the approval being decided; "" means the one pending
	// now (read from the status query).
	ApprovalID string `json:"approval_id,omitempty"`
	// Reason is required to reject.
	Reason string `json:"reason,omitempty"`
	// Sealer obtains the seal for the deciding staff member: a
	// codecserver.SealClient with their own token (the starter), which
	// asks the codec server.
	Sealer support.DecisionSealer `json:"-"`
}

// Confirm confirms the published total for the user: quoteHash must be
// the confirmation's quote_hash (from StartDraftOrder, WaitForAction or
// Status). It returns nil once the draft order exists for that hash —
// also when this hash was confirmed before, by this caller's retry,
// another caller or a signal. Otherwise the workflow's own answer to this
// call: CONFLICT with the reason (stale_quote_hash, not_waiting) for a
// hash that is not the published one or a draft order that waits for no
// confirmation, PRICE_CHANGED with the new total when the quote expired
// and the price moved, CONFLICT naming the state when the run ended
// otherwise. It waits as long as ctx allows.
func (c *Client) Confirm(ctx context.Context, workflowID, quoteHash string) error {
	_, err := c.ConfirmResult(ctx, workflowID, quoteHash)
	return err
}

// ConfirmResult is Confirm, returning the workflow's answer: the result it
// ended with and whether this hash had already been confirmed.
func (c *Client) ConfirmResult(ctx context.Context, workflowID, quoteHash string) (draftorder.ConfirmAnswer, error) {
	var ans draftorder.ConfirmAnswer
	if err := checkDraftOrderID(workflowID); err != nil {
		return ans, err
	}
	if strings.TrimSpace(quoteHash) == "" {
		return ans, errf(toolkit.InvalidArgument, "quote_hash is required (the status query's confirmation.quote_hash)")
	}
	err := c.update(ctx, workflowID, draftorder.UpdateConfirm, draftorder.ConfirmInput{QuoteHash: quoteHash}, &ans)
	if !errors.Is(err, errRunClosed) {
		return ans, err
	}
	// The run ended before this call reached it: the same answer the
	// update gives, from the result.
	res, err := c.closedResult(ctx, workflowID)
	if err != nil {
		return ans, err
	}
	if res.DraftOrder == nil || res.DraftOrder.QuoteHash != quoteHash {
		return ans, endedError(workflowID, res)
	}
	return draftorder.ConfirmAnswer{AlreadyDone: true, Result: res}, nil
}

// Cancel asks the draft order to stop before the draft order is created
// (the cancel signal), then waits up to Options.AckTimeout for the run to
// end: nil when it ended cancelled (or already had), CONFLICT when it
// ended otherwise (the draft order was already being created). The signal
// is durable once sent, so a run still busy at the timeout is not an
// error.
func (c *Client) Cancel(ctx context.Context, workflowID, reason string) error {
	if err := checkDraftOrderID(workflowID); err != nil {
		return err
	}
	st, err := c.Status(ctx, workflowID)
	if err != nil {
		return err
	}
	if st.Result != nil {
		return cancelAnswer(workflowID, *st.Result)
	}
	if err := c.tc.SignalWorkflow(ctx, workflowID, "", draftorder.SignalCancel, draftorder.CancelSignal{Reason: reason}); err != nil {
		return c.closedOrMissing(ctx, err, workflowID, "signal "+draftorder.SignalCancel+" to")
	}
	if c.ack <= 0 {
		return nil
	}
	st, err = c.nextAction(ctx, workflowID, time.Now().Add(c.ack), draftorder.NextActionInput{UntilEnd: true})
	if toolkit.CodeOf(err) == toolkit.Timeout {
		return nil
	}
	if err != nil {
		return err
	}
	return cancelAnswer(workflowID, *st.Result)
}

// cancelAnswer is nil for a run that ended cancelled, CONFLICT otherwise.
func cancelAnswer(id string, r draftorder.Result) error {
	if r.State == draftorder.StateCancelled {
		return nil
	}
	return endedError(id, r)
}

// Approve records support staff's approval of the pending approval.
func (c *Client) Approve(ctx context.Context, workflowID string, d ApprovalDecision) error {
	_, err := c.Decide(ctx, workflowID, support.DecisionApprove, d)
	return err
}

// Reject records support staff's rejection; a reason is required.
func (c *Client) Reject(ctx context.Context, workflowID string, d ApprovalDecision) error {
	if strings.TrimSpace(d.Reason) == "" {
		return errf(toolkit.InvalidArgument, "reason is required to reject")
	}
	_, err := c.Decide(ctx, workflowID, support.DecisionReject, d)
	return err
}

// Decide records decision (approve or reject) on the draft order's
// approval and returns the workflow's answer to this call: the recorded
// outcome (AlreadyDone when this approver had made this decision before),
// or the refusal with its reason: UNAUTHORIZED when the decision could not
// be sealed for an authenticated staff member, FORBIDDEN for an unknown or
// inactive approver or a role the approval does not allow, CONFLICT for a
// stale, already decided or absent approval, INVALID_ARGUMENT for a
// malformed one.
func (c *Client) Decide(ctx context.Context, workflowID, decision string, d ApprovalDecision) (approval.Answer, error) {
	var ans approval.Answer
	if err := checkDraftOrderID(workflowID); err != nil {
		return ans, err
	}
	if d.Sealer == nil {
		return ans, errf(toolkit.Unauthorized, "a decision needs a sealer: the staff member's own credential (docs/approvals.md#sealed-decisions)")
	}
	if d.ApprovalID == "" {
		st, err := c.Status(ctx, workflowID)
		if err != nil {
			return ans, err
		}
		if st.Approvals.Pending == nil {
			return ans, errf(toolkit.Conflict, "%s has no pending approval (state %s)", workflowID, st.State)
		}
		d.ApprovalID = st.Approvals.Pending.ApprovalID
	}
	sealed, err := d.Sealer.SealDecision(ctx, support.Decision{ApprovalID: d.ApprovalID, Decision: decision, Reason: d.Reason})
	if err != nil {
		return ans, err
	}
	err = c.update(ctx, workflowID, approval.UpdateApproval, approval.SignalOf(sealed), &ans)
	if errors.Is(err, errRunClosed) {
		return ans, errf(toolkit.Conflict, "%s already ended: no approval is pending", workflowID)
	}
	return ans, err
}

// Status answers the draft order's status query. For a run that ended
// without a result (failed, terminated, timed out) it returns the last
// status AND an error with the closed-set code of why (errors.Is
// ErrRunEnded), so a caller never mistakes a dead run's last state for a
// live one.
func (c *Client) Status(ctx context.Context, workflowID string) (draftorder.Status, error) {
	st, err := c.queryStatus(ctx, workflowID)
	if err == nil && st.Result != nil {
		return st, nil // ended with a result
	}
	if checkDraftOrderID(workflowID) != nil {
		return st, err
	}
	if ended := c.runEnded(ctx, workflowID); ended != nil && errors.Is(ended, ErrRunEnded) {
		return st, ended
	}
	return st, err
}

// WaitForAction waits until the draft order needs someone (the user to
// confirm the total, or staff to decide an approval) or has ended, and
// returns that status. The workflow answers when it gets there (the
// next_action update): nothing polls. A zero deadline waits as long as
// ctx. At the deadline it returns TIMEOUT with the current status.
func (c *Client) WaitForAction(ctx context.Context, workflowID string, deadline time.Time) (draftorder.Status, error) {
	return c.nextAction(ctx, workflowID, deadline, draftorder.NextActionInput{})
}

// WaitResult waits for the draft order's result and returns it:
// DRAFT_CREATED with the draft once it is written (its run then goes on
// holding the stock: OrderStatus), or why not. A business outcome
// (blocked, out of stock, cancelled, expired …) is a result with State
// and Code, not an error; the error is for a run that failed (its
// closed-set code, e.g. INVALID_ARGUMENT), a deadline that passed first
// (TIMEOUT) or a server that cannot be reached. The workflow answers
// when it gets there (the next_action update until_end); a run that
// closed answers from its history. A zero deadline waits as long as ctx.
func (c *Client) WaitResult(ctx context.Context, workflowID string, deadline time.Time) (draftorder.Result, error) {
	var res draftorder.Result
	if err := checkDraftOrderID(workflowID); err != nil {
		return res, err
	}
	wctx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	var st draftorder.Status
	err := c.update(wctx, workflowID, draftorder.UpdateNextAction, draftorder.NextActionInput{UntilEnd: true}, &st)
	switch {
	case err == nil && st.Result != nil:
		return *st.Result, nil
	case err == nil:
		return res, errf(toolkit.UpstreamError, "%s answered without a result (state %s)", workflowID, st.State)
	case errors.Is(err, errRunClosed):
		err = c.wait(ctx, workflowID, deadline, &res)
		return res, err
	case wctx.Err() != nil && ctx.Err() == nil:
		return res, errf(toolkit.Timeout, "%s is still running at the deadline", workflowID)
	}
	return res, err
}

// wait gets the run's result, bounded by deadline.
func (c *Client) wait(ctx context.Context, workflowID string, deadline time.Time, out any) error {
	wctx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	err := c.tc.GetWorkflow(wctx, workflowID, "").Get(wctx, out)
	if err == nil {
		return nil
	}
	if wctx.Err() != nil && ctx.Err() == nil {
		return errf(toolkit.Timeout, "%s is still running at the deadline", workflowID)
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return errf(toolkit.NotFound, "workflow %s not found in namespace %s", workflowID, c.namespace).WithCause(err)
	}
	return c.wrap(err, workflowID, "wait for")
}

// checkDraftOrderID refuses an id that is not a draft order's, before a
// status query of another workflow type decodes into the wrong struct.
func checkDraftOrderID(id string) error {
	if !strings.HasPrefix(id, workflows.DraftOrderIDPrefix) {
		return errf(toolkit.InvalidArgument, "not a draft order workflow id: it must be draft-order/{user_id}/{idempotency_key}")
	}
	return nil
}
