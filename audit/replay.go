package audit

import (
	"strings"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec"
)

// replay runs the history through the registered workflow code. A
// divergence is a finding; a workflow type this build does not register
// is an error, since there is no code to check against.
func replay(d Deps, h *historypb.History, rep *Report) error {
	fn, ok := d.Workflows[rep.WorkflowType]
	if !ok {
		return errf("workflow type %q is not registered in this build: cannot replay %s", rep.WorkflowType, rep.WorkflowID)
	}
	// Failures in an encrypted history carry their message as an encoded
	// payload: the failure converter must decode through the same codec.
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
		DataConverter: d.DataConverter, FailureConverter: codec.FailureConverter(d.DataConverter),
	})
	if err != nil {
		return errf("replayer: %v", err)
	}
	// Only the audited type is needed, registered under its own name.
	r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: rep.WorkflowType})
	// The real ids, not the replayer's placeholders: workflow code derives
	// correlation and approval ids from them.
	exec := workflow.Execution{ID: rep.WorkflowID, RunID: rep.RunID}
	err = r.ReplayWorkflowHistoryWithOptions(client.TemporalLogger(d.Logger.Named("replay")), h,
		worker.ReplayWorkflowHistoryOptions{OriginalExecution: exec})
	if err == nil {
		rep.Replay = ReplayResult{Ran: true, OK: true}
		return nil
	}
	rep.Replay = ReplayResult{Ran: true, OK: false, Error: err.Error()}
	kind := KindReplayFailed
	if isNondeterminism(err) {
		kind = KindNondeterminism
	}
	rep.find(Finding{Kind: kind, Detail: err.Error()})
	return nil
}

// isNondeterminism recognises the SDK's non-determinism errors: the
// TMPRL1100 family (commands that do not match the history) and a replay
// that ends with a different result than the history's close event.
func isNondeterminism(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "TMPRL1100") || strings.Contains(msg, "nondeterministic") ||
		strings.Contains(msg, "doesn't return the same result")
}
