package audit

import (
	"fmt"
	"strings"
	"sync"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/client/codec"
)

// replay runs the history through the registered workflow code. A
// divergence is a finding, and so is a workflow type this build does not
// register: no code of cartwright's ran it (a worker of one's own that
// scheduled cartwright's activities), so nothing can be replayed, and the
// evidence and rows it left are checked all the same.
func replay(rs *replayers, h *historypb.History, rep *Report) error {
	if _, ok := rs.d.Workflows[rep.WorkflowType]; !ok {
		rep.Replay = ReplayResult{Ran: false, Error: "workflow type not registered"}
		rep.find(Finding{Kind: KindUnregisteredType, Detail: fmt.Sprintf(
			"workflow type %q is not registered in this build: no cartwright code ran %s", rep.WorkflowType, rep.WorkflowID)})
		return nil
	}
	r, err := rs.get(rep.WorkflowType)
	if err != nil {
		return err
	}
	// The real ids, not the replayer's placeholders: workflow code derives
	// correlation and approval ids from them.
	exec := workflow.Execution{ID: rep.WorkflowID, RunID: rep.RunID}
	err = r.ReplayWorkflowHistoryWithOptions(rs.logger, h, worker.ReplayWorkflowHistoryOptions{OriginalExecution: exec})
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

// replayers hands out one replayer per workflow type, built on first use
// and shared by the runs of a batch (AuditMany) or made for one run
// (Audit). A replayer is its registry and converters; each replay makes
// its own task handler and cache, so runs replay on one replayer at once
// (docs/performance.md#audit-rate). The SDK's replayer keeps each
// completed run's result by workflow id, so one lives for a batch of runs,
// not for a whole query.
type replayers struct {
	d      Deps
	logger log.Logger
	mu     sync.Mutex
	byType map[string]worker.WorkflowReplayer
}

func newReplayers(d Deps) *replayers {
	return &replayers{d: d, logger: client.TemporalLogger(d.Logger.Named("replay")), byType: map[string]worker.WorkflowReplayer{}}
}

func (rs *replayers) get(workflowType string) (worker.WorkflowReplayer, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.byType[workflowType]; r != nil {
		return r, nil
	}
	fn := rs.d.Workflows[workflowType]
	// Failures in an encrypted history carry their message as an encoded
	// payload: the failure converter must decode through the same codec.
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
		DataConverter: rs.d.DataConverter, FailureConverter: codec.FailureConverter(rs.d.DataConverter),
	})
	if err != nil {
		return nil, errf("replayer: %v", err)
	}
	// Only the audited type is needed, registered under its own name.
	r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: workflowType})
	rs.byType[workflowType] = r
	return r, nil
}

// isNondeterminism recognises the SDK's non-determinism errors: the
// TMPRL1100 family (commands that do not match the history) and a replay
// that ends with a different result than the history's close event.
func isNondeterminism(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "TMPRL1100") || strings.Contains(msg, "nondeterministic") ||
		strings.Contains(msg, "doesn't return the same result")
}
