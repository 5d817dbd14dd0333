package client

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// errRunClosed: the update reached a run that had already closed; the
// caller answers from the run's result instead.
var errRunClosed = errors.New("the run already closed")

// update sends a Workflow Update to the draft order and waits, as long as
// ctx allows, for the workflow's answer to this very call: out on
// success, or its refusal (the validator's, before anything was written)
// or failure as a closed-set error carrying the reason.
func (c *Client) update(ctx context.Context, id, name string, arg, out any) error {
	// A worker that lacks a payload key fails the workflow task the update
	// needs, again and again, and the update waits for ctx: look once
	// whether that is why, soon, and answer with the key instead of waiting.
	uctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watch := time.AfterFunc(stuckCheckAfter, func() {
		if keyID, ok := c.stillStuck(uctx, id); ok {
			cancel(&stuckError{keyID: keyID})
		}
	})
	defer watch.Stop()
	h, err := c.tc.UpdateWorkflow(uctx, sdkclient.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: name, Args: []any{arg}, WaitForStage: sdkclient.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(uctx, out)
	}
	var stuck *stuckError
	if err != nil && errors.As(context.Cause(uctx), &stuck) {
		return workerLacksKey("update "+name+" of", id, stuck.keyID, err)
	}
	return c.updateError(ctx, err, id, "update "+name+" of")
}

// stuckCheckAfter is how long an update waits before update looks for a
// workflow task failing on a missing payload key: such a task fails within
// milliseconds, and most updates are answered well before.
const stuckCheckAfter = 2 * time.Second

// stuckError cancels an update whose workflow cannot run for want of keyID.
type stuckError struct{ keyID string }

func (e *stuckError) Error() string { return "payload key " + e.keyID + " missing on the worker" }

// updateError maps an update's error: errRunClosed for a run that closed
// before the update reached it (the server says NotFound, as for an id
// that never existed), TIMEOUT when ctx ended first, else the closed set
// (a workflow's refusal keeps its code and details).
func (c *Client) updateError(ctx context.Context, err error, id, what string) error {
	if err == nil {
		return nil
	}
	if keyID, ok := codec.MissingKeyID(err); ok {
		return clientLacksKey(what, id, keyID, err)
	}
	// A workflow whose worker lacks a payload key fails every workflow
	// task: the update is refused or never answered. Say why. (A
	// workflow's own refusal is an application error: it ran.)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		if keyID, ok := c.stuckOnMissingKey(ctx, id); ok {
			return workerLacksKey(what, id, keyID, err)
		}
	}
	if ctx.Err() != nil {
		// Say what kept the answer: history, matching (an update waits
		// for a workflow task, which matching hands out) or the worker
		// (docs/backend.md#outages).
		return errf(toolkit.Timeout, "%s %s: no answer before the deadline: %s", what, id, c.noAnswerWhy(id)).WithCause(err)
	}
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		if d, derr := c.tc.DescribeWorkflowExecution(ctx, id, ""); derr == nil &&
			d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return errRunClosed
		}
	}
	return c.wrap(err, id, what)
}

// nextAction asks the workflow for its next action (the next_action
// update), bounded by deadline (zero: as long as ctx). At the deadline it
// returns TIMEOUT with the status as it is; for a run that closed, its
// final status (and for a failed run the error saying why).
func (c *Client) nextAction(ctx context.Context, id string, deadline time.Time, in draftorder.NextActionInput) (draftorder.Status, error) {
	var st draftorder.Status
	if err := checkDraftOrderID(id); err != nil {
		return st, err
	}
	wctx := ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	err := c.update(wctx, id, draftorder.UpdateNextAction, in, &st)
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, errRunClosed):
		return c.Status(ctx, id)
	case wctx.Err() != nil && ctx.Err() == nil:
		st, serr := c.Status(ctx, id)
		if serr != nil {
			return st, serr
		}
		return st, errf(toolkit.Timeout, "%s is still in state %s: nothing to act on by the deadline", id, st.State).
			WithDetail("state", st.State)
	}
	return st, err
}

// closedResult is the result of a run that closed: a failed run's error
// has its own code (e.g. INVALID_ARGUMENT).
func (c *Client) closedResult(ctx context.Context, id string) (draftorder.Result, error) {
	var res draftorder.Result
	err := c.wait(ctx, id, time.Time{}, &res)
	return res, err
}

// endedError is the CONFLICT of a request to a run that already ended
// otherwise; a run that ended on a refusal passes on its whole error
// (details.result_error) and what to do about it.
func endedError(id string, r draftorder.Result) error {
	e := errf(toolkit.Conflict, "%s already ended (%s): %s", id, r.State, r.Message).WithDetail("state", r.State)
	if r.Error != nil {
		e.WithDetail("result_error", r.Error).WithRecovery(r.Error.RecoverySuggestion, r.Error.NextSteps...)
	}
	return e
}
