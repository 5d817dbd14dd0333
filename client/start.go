package client

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// StartDraftOrder starts the draft order of in, or attaches to the one the
// same user and idempotency key already started: one key never yields two
// runs or two draft orders. It returns with the draft order's first
// answer (DraftOrderHandle.Status): the published total to confirm, the
// staff decision it waits for, or its end (a refusal such as an unknown
// SKU's NOT_FOUND is an end, Status.Result with its whole error); a run
// that failed (an input started past Check) is that error, with the
// handle naming the run. Start and answer are one round
// trip (Update-with-Start: the next_action update rides on the start), so
// nothing polls; it waits as long as ctx allows.
//
// The input is checked first with the workflow's own check
// (draftorder.Input.Check: INVALID_ARGUMENT naming the field) and its
// currency against the workers' exchange rates in use (checkRates), so a
// bad input starts nothing and leaves the key free. The rates are today's,
// the key's run may be older: a currency they no longer price is no
// refusal when the key already holds a run the start would attach to
// (keyKept), whose answer is the retry's. Empty windows and
// thresholds are filled from the client's Defaults, so the values are in
// the history.
//
// The key is bound to the order (draftorder.StartOptions): a key
// whose run completed keeps that run (Attached, its result as Status); a
// key whose run failed, was terminated or timed out starts a new run; a
// key already used for another basket, address, currency, service or
// incoterm is CONFLICT naming the key, and its run is left alone (the run
// itself refuses the update that carries another order, as it does for
// any client: docs/backend.md#other-languages).
func (c *Client) StartDraftOrder(ctx context.Context, in draftorder.Input) (DraftOrderHandle, error) {
	var h DraftOrderHandle
	in.ApplyDefaults(c.defaults)
	in, err := in.Check()
	if err != nil {
		return h, err
	}
	opts, err := draftorder.StartOptions(c.taskQueue, in)
	if err != nil {
		return h, errf(toolkit.InvalidArgument, "%v", err)
	}
	if err := c.checkRates(withTrace(ctx, in.Request.Trace), in.Currency); err != nil && !c.keyKept(ctx, opts.ID) {
		return h, err
	}
	fp := opts.Memo[workflows.MemoInputFingerprint].(string)
	h.WorkflowID = opts.ID
	op := c.tc.NewWithStartWorkflowOperation(opts, draftorder.WorkflowName, in)
	pctx, probe := withStartProbe(withTrace(ctx, in.Request.Trace))
	uh, err := c.tc.UpdateWithStartWorkflow(pctx, sdkclient.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions: sdkclient.UpdateWorkflowOptions{
			UpdateName: draftorder.UpdateNextAction, Args: []any{draftorder.NextActionInput{Order: &in}},
			WaitForStage: sdkclient.WorkflowUpdateStageCompleted,
		},
	})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		// The reuse policy refused the start: the key's run completed and
		// holds it. That run is this start's answer.
		h.RunID, h.Attached = started.RunId, true
		if err := c.sameOrder(ctx, h.Handle, in.Request.IdempotencyKey, fp); err != nil {
			return h, err
		}
		res, err := c.closedResult(ctx, h.WorkflowID)
		h.Status = resultStatus(res, in)
		return h, err
	}
	answered, fresh := probe.result()
	h.RunID, h.Attached = probe.runID(), !answered || !fresh
	if h.RunID == "" && err == nil {
		h.RunID = uh.RunID()
	}
	if err == nil && h.Attached {
		// One description answers both: who started the run, and whether
		// it is this order.
		var desc *workflowservice.DescribeWorkflowExecutionResponse
		if desc, err = c.describe(ctx, h.Handle); err == nil {
			if h.Attached = !startedBy(desc, probe.requestID()); h.Attached {
				err = c.sameOrderAs(ctx, h.Handle, desc, in.Request.IdempotencyKey, fp)
			}
		}
	}
	if err == nil {
		err = uh.Get(ctx, &h.Status)
	}
	if err = c.updateError(ctx, err, h.WorkflowID, "start"); errors.Is(err, errRunClosed) {
		// The run closed before it answered (it refused its input):
		// its result or failure is the answer.
		res, rerr := c.closedResult(ctx, h.WorkflowID)
		h.Status = resultStatus(res, in)
		return h, rerr
	}
	return h, err
}

// keyKept reports whether workflow id holds a run a start attaches to
// (running, or completed: the reuse policy keeps both,
// workflows.OnceStartOptions). Anything else, or no answer, is false.
func (c *Client) keyKept(ctx context.Context, id string) bool {
	desc, err := c.describe(ctx, Handle{WorkflowID: id})
	switch desc.GetWorkflowExecutionInfo().GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return err == nil
	}
	return false
}

// resultStatus is the status of a completed run known only by its result.
func resultStatus(res draftorder.Result, in draftorder.Input) draftorder.Status {
	return draftorder.Status{
		State: res.State, Destination: in.ShipTo.Country, Currency: in.Currency, Total: res.Total,
		DraftOrder: res.DraftOrder, Evidence: res.Evidence, Result: &res,
	}
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

// startedBy reports whether the run described by desc was started by the
// start request requestID. Concurrent Update-with-Starts of one id can
// make the server answer the one that created the run "busy" and its
// retry "attached"; the run's own record of the request that started it
// settles who did.
func startedBy(desc *workflowservice.DescribeWorkflowExecutionResponse, requestID string) bool {
	if requestID == "" {
		return false
	}
	info := desc.GetWorkflowExtendedInfo().GetRequestIdInfos()[requestID]
	return info.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
}
