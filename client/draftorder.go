package client

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
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

// DraftOrderHandle is the handle StartDraftOrder returns.
type DraftOrderHandle = Handle

// ApprovalDecision is a support-staff decision for Approve and Reject.
type ApprovalDecision struct {
	// ApprovalID is the approval being decided; "" means the one pending
	// now (read from the status query).
	ApprovalID string `json:"approval_id,omitempty"`
	// Approver is the staff id of the person deciding (staff table).
	Approver string `json:"approver"`
	// Reason is required to reject.
	Reason string `json:"reason,omitempty"`
}

// StartDraftOrder starts the draft order of in, or attaches to the one the
// same user and idempotency key already started: one key never yields two
// runs or two draft orders. The input is checked first with the workflow's
// own check (DraftOrderInput.Check: INVALID_ARGUMENT naming the field), so
// a bad input starts nothing and leaves the key free. Empty windows and
// thresholds are filled from the client's Defaults, so the values are in
// the history.
//
// The key is bound to the order (workflows.DraftOrderStartOptions): a key
// whose run completed keeps that run (Attached, same result); a key whose
// run failed, was terminated or timed out starts a new run; a key already
// used for another basket, address, currency, service or incoterm is
// CONFLICT naming the key, and its run is left alone.
func (c *Client) StartDraftOrder(ctx context.Context, in workflows.DraftOrderInput) (DraftOrderHandle, error) {
	in.ApplyDefaults(c.defaults)
	in, err := in.Check()
	if err != nil {
		return Handle{}, err
	}
	opts, err := workflows.DraftOrderStartOptions(c.taskQueue, in)
	if err != nil {
		return Handle{}, errf(toolkit.InvalidArgument, "%v", err)
	}
	h, err := c.start(withTrace(ctx, in.Request.Trace), opts, workflows.DraftOrderWorkflowName, in)
	if err != nil || !h.Attached {
		return h, err
	}
	return h, c.sameOrder(ctx, h, in.Request.IdempotencyKey, opts.Memo[workflows.MemoInputFingerprint].(string))
}

// start runs ExecuteWorkflow and learns from the probe whether a run was
// started. A start refused by the reuse policy (the id's run already
// ended) comes back from the SDK as that closed run, without an answer.
func (c *Client) start(ctx context.Context, opts sdkclient.StartWorkflowOptions, workflowType string, in any) (Handle, error) {
	pctx, probe := withStartProbe(ctx)
	run, err := c.tc.ExecuteWorkflow(pctx, opts, workflowType, in)
	if err != nil {
		return Handle{}, c.wrap(err, opts.ID, "start")
	}
	answered, started := probe.result()
	return Handle{WorkflowID: run.GetID(), RunID: run.GetRunID(), Attached: !answered || !started}, nil
}

// Confirm sends the user's confirmation of the published total: quoteHash
// must be the status query's confirmation.quote_hash. It then waits (up to
// Options.AckTimeout) to see whether the workflow took it: a stale hash, a
// confirmation nobody waits for or a changed price come back as CONFLICT
// or PRICE_CHANGED with the workflow's reason. Confirming again the hash
// that created the draft order is not an error.
func (c *Client) Confirm(ctx context.Context, workflowID, quoteHash string) error {
	if err := checkDraftOrderID(workflowID); err != nil {
		return err
	}
	if strings.TrimSpace(quoteHash) == "" {
		return errf(toolkit.InvalidArgument, "quote_hash is required (the status query's confirmation.quote_hash)")
	}
	err := c.signalDraft(ctx, workflowID, workflows.SignalConfirm, workflows.ConfirmSignal{QuoteHash: quoteHash}, signalHooks{
		taken: func(st workflows.DraftOrderStatus) (bool, error) {
			if err := priceChanged(workflowID, st, quoteHash); err != nil {
				return true, err
			}
			// Taken once the draft order is being created or has ended;
			// a re-quote (the quote had expired) is still on the way.
			return st.Result != nil || st.State == workflows.StateCreating, nil
		},
		ended: func(r workflows.DraftOrderResult) error {
			if r.DraftOrder != nil && r.DraftOrder.QuoteHash == quoteHash {
				return nil // this very confirmation created the draft order
			}
			return endedError(workflowID, r)
		},
	})
	if te := toolkit.AsError(err); te != nil && te.Details["reason"] == workflows.RejectStaleQuoteHash {
		// A hash the user confirmed before the price changed: say so.
		if st, serr := c.Status(ctx, workflowID); serr == nil {
			if perr := priceChanged(workflowID, st, quoteHash); perr != nil {
				return perr
			}
		}
	}
	return err
}

// priceChanged is PRICE_CHANGED when the run re-quoted after quoteHash was
// confirmed and now waits for a confirmation of a different total.
func priceChanged(id string, st workflows.DraftOrderStatus, quoteHash string) error {
	p := st.Confirmation
	if p == nil || !p.PriceChanged || p.PreviousQuoteHash != quoteHash || p.QuoteHash == quoteHash {
		return nil
	}
	return errf(toolkit.PriceChanged, "%s: the price changed on re-quote; the new total is %d %s (minor units), confirm quote_hash %s",
		id, p.GrandTotal.Amount, p.GrandTotal.Currency, p.QuoteHash).
		WithDetail("quote_hash", p.QuoteHash).WithDetail("grand_total", p.GrandTotal)
}

// Cancel asks the draft order to stop before the draft order is created.
// A draft order already being created refuses (CONFLICT); one already
// cancelled is fine.
func (c *Client) Cancel(ctx context.Context, workflowID, reason string) error {
	if err := checkDraftOrderID(workflowID); err != nil {
		return err
	}
	return c.signalDraft(ctx, workflowID, workflows.SignalCancel, workflows.CancelSignal{Reason: reason}, signalHooks{
		taken: func(st workflows.DraftOrderStatus) (bool, error) { return st.Result != nil, nil },
		ended: func(r workflows.DraftOrderResult) error {
			if r.State == workflows.StateCancelled {
				return nil
			}
			return endedError(workflowID, r)
		},
	})
}

// Approve sends support staff's approval of the pending approval.
func (c *Client) Approve(ctx context.Context, workflowID string, d ApprovalDecision) error {
	return c.decide(ctx, workflowID, support.DecisionApprove, d)
}

// Reject sends support staff's rejection; a reason is required.
func (c *Client) Reject(ctx context.Context, workflowID string, d ApprovalDecision) error {
	if strings.TrimSpace(d.Reason) == "" {
		return errf(toolkit.InvalidArgument, "reason is required to reject")
	}
	return c.decide(ctx, workflowID, support.DecisionReject, d)
}

func (c *Client) decide(ctx context.Context, workflowID, decision string, d ApprovalDecision) error {
	if err := checkDraftOrderID(workflowID); err != nil {
		return err
	}
	if d.Approver == "" {
		return errf(toolkit.InvalidArgument, "approver is required (a staff id, e.g. alice.support)")
	}
	if d.ApprovalID == "" {
		st, err := c.Status(ctx, workflowID)
		if err != nil {
			return err
		}
		if st.Approvals.Pending == nil {
			return errf(toolkit.Conflict, "%s has no pending approval (state %s)", workflowID, st.State)
		}
		d.ApprovalID = st.Approvals.Pending.ApprovalID
	}
	sig := workflows.ApprovalSignal{ApprovalID: d.ApprovalID, Decision: decision, Approver: d.Approver, Reason: d.Reason}
	return c.signalDraft(ctx, workflowID, workflows.SignalApproval, sig, signalHooks{
		taken: func(st workflows.DraftOrderStatus) (bool, error) {
			for _, o := range st.Approvals.Decisions {
				if o.ApprovalID == d.ApprovalID && o.Approver == d.Approver {
					return true, nil
				}
			}
			return st.Result != nil, nil
		},
	})
}

// Status answers the draft order's status query. For a run that ended
// without a result (failed, terminated, timed out) it returns the last
// status AND an error with the closed-set code of why (errors.Is
// ErrRunEnded), so a caller never mistakes a dead run's last state for a
// live one.
func (c *Client) Status(ctx context.Context, workflowID string) (workflows.DraftOrderStatus, error) {
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

// WaitForAction polls the status query until the draft order needs someone
// (the user to confirm the total, or staff to decide an approval) or has
// ended, and returns that status. A zero deadline waits as long as ctx.
// At the deadline it returns TIMEOUT with the last status.
func (c *Client) WaitForAction(ctx context.Context, workflowID string, deadline time.Time) (workflows.DraftOrderStatus, error) {
	return c.pollStatus(ctx, workflowID, deadline, "a total to confirm", func(st workflows.DraftOrderStatus) bool {
		return st.Result != nil || st.Confirmation != nil || st.Approvals.Pending != nil
	})
}

// WaitResult waits for the draft order to end and returns its result. A
// business outcome (blocked, out of stock, cancelled, expired …) is a
// result with State and Code, not an error; the error is for a run that
// failed (its closed-set code, e.g. INVALID_ARGUMENT), a deadline that
// passed first (TIMEOUT) or a server that cannot be reached. A zero
// deadline waits as long as ctx.
func (c *Client) WaitResult(ctx context.Context, workflowID string, deadline time.Time) (workflows.DraftOrderResult, error) {
	var res workflows.DraftOrderResult
	if err := checkDraftOrderID(workflowID); err != nil {
		return res, err
	}
	err := c.wait(ctx, workflowID, deadline, &res)
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
