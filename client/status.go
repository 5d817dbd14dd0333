package client

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// queryStatus answers the draft order's status query, nothing more: a run
// that failed keeps answering its last state (see Status).
func (c *Client) queryStatus(ctx context.Context, workflowID string) (draftorder.Status, error) {
	var st draftorder.Status
	if err := checkDraftOrderID(workflowID); err != nil {
		return st, err
	}
	v, err := c.tc.QueryWorkflow(ctx, workflowID, "", workflows.QueryStatus)
	if err != nil {
		return st, c.wrap(err, workflowID, "query status of")
	}
	if err := v.Get(&st); err != nil {
		return st, decodeError(err, "status of", workflowID)
	}
	return st, nil
}

// ErrRunEnded marks the error Status returns for a run that ended without a
// result (failed, terminated, timed out, cancelled): errors.Is(err,
// ErrRunEnded). The error's code says why; the status is the last one.
var ErrRunEnded = errors.New("the run ended without a result")

// runEnded returns nil while the run is running or completed, and for a run
// that ended otherwise a closed-set error saying so and why: a failure's
// own code (INVALID_ARGUMENT, UPSTREAM_ERROR …), TIMEOUT for a run that
// timed out, UPSTREAM_ERROR for one terminated or cancelled by an operator.
func (c *Client) runEnded(ctx context.Context, workflowID string) error {
	d, err := c.tc.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		return c.wrap(err, workflowID, "describe")
	}
	info := d.GetWorkflowExecutionInfo()
	s := info.GetStatus()
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED,
		enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return nil
	}
	code, why := toolkit.UpstreamError, statusName(s)
	if s == enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT {
		code = toolkit.Timeout
	}
	if s == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		// A run that refused its input at the start ends canceled with
		// the check's error (docs/backend.md#other-languages).
		if te := c.startRefusal(ctx, workflowID); te != nil {
			code, why = te.Code, te.Message
		}
	}
	if s == enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		if f := lastFailure(ctx, c, workflowID); f != nil {
			why = failureMessage(c.dc, f)
			if t := toolkit.Code(f.GetApplicationFailureInfo().GetType()); t.Valid() {
				code = t
			}
		}
	}
	return errf(code, "draft order %s %s: %s", workflowID, lowerStatus(s), why).
		WithDetail("run_status", statusName(s)).WithCause(ErrRunEnded)
}

// startRefusal is the error a canceled run closed with when it refused its
// input at its start; nil for a run cancelled otherwise.
func (c *Client) startRefusal(ctx context.Context, workflowID string) *toolkit.Error {
	it := c.tc.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil
		}
		if a := e.GetWorkflowExecutionCanceledEventAttributes(); a != nil && a.GetDetails() != nil {
			var te toolkit.Error
			if c.dc.FromPayloads(a.GetDetails(), &te) == nil && te.Code.Valid() {
				return &te
			}
		}
	}
	return nil
}

// lastFailure reads the failure of a failed run from its closing event.
func lastFailure(ctx context.Context, c *Client, workflowID string) *failurepb.Failure {
	it := c.tc.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil
		}
		if a := e.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			f := a.GetFailure()
			// An activity's failure wraps the tool's: report the tool's.
			for f.GetCause() != nil && f.GetApplicationFailureInfo() == nil {
				f = f.GetCause()
			}
			return f
		}
	}
	return nil
}

func lowerStatus(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "was terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "was cancelled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	}
	return "ended (" + statusName(s) + ")"
}

// failureMessage is a failure's own message: failures are stored with
// their message and stack encrypted (codec.FailureConverter), so the
// history's message field reads only "Encoded failure"; decoding it
// through the codec gives the message the run failed with.
func failureMessage(dc converter.DataConverter, f *failurepb.Failure) string {
	if dc == nil || f.GetEncodedAttributes() == nil {
		return f.GetMessage()
	}
	err := codec.FailureConverter(dc).FailureToError(f)
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	return err.Error()
}
