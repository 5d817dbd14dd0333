package maintenance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// resultFixture completes with a result that names snapshot ids the way a
// real workflow's result carries envelopes.
func resultFixture(ctx workflow.Context, ids []string) (map[string]any, error) {
	return map[string]any{
		"envelope": map[string]any{"evidence": map[string]any{"snapshot_id": ids[0]}},
		"steps":    []any{map[string]any{"snapshot_id": ids[1]}, "not-an-id"},
	}, nil
}

func TestReconcileWorkflow(t *testing.T) {
	pool := testenv.Postgres(t)
	c := clienttest.Dial(t)
	tq := testenv.TaskQueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()

	store, _ := evidencetest.Store(t, pool, nil)
	out := json.RawMessage(`{"ok":true}`)
	present, err := store.Record(ctx, toolkit.Snapshot{Tool: "test.tool", ToolVersion: "1.0.0", RequestID: "req-rw",
		Output: out, Status: toolkit.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	missing, _ := evidence.NewSnapshotID(time.Now())
	if _, err := pool.Exec(ctx, `INSERT INTO audit_events (correlation_id, two_phase, tool, user_id_hash, actor_type,
		action, reason, status, payload_sha, workflow_id, run_id, activity_id, created_at)
		VALUES ('corr-00000000000000ab', true, 'checkout.create_draft_order', '', 'user', 'allow', '', 'pending', '', 'wf', 'r', '1',
		now() - interval '3 hours')`); err != nil {
		t.Fatal(err)
	}

	w := worker.New(c, tq, worker.Options{})
	w.RegisterWorkflowWithOptions(maintenance.Reconcile, workflow.RegisterOptions{Name: maintenance.ReconcileWorkflowName})
	w.RegisterWorkflowWithOptions(resultFixture, workflow.RegisterOptions{Name: "ReconcileResultFixture"})
	w.RegisterActivity(&activities.Reconcile{Pool: pool, Temporal: c, PendingAfter: evidence.DefaultPendingAfter, RowKeys: store.RowKeys()})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	fx, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "fixture-" + tq, TaskQueue: tq}, "ReconcileResultFixture",
		[]string{present, missing})
	if err != nil || fx.Get(ctx, nil) != nil {
		t.Fatalf("fixture: %v", err)
	}
	waitVisible(t, ctx, c, fmt.Sprintf(`TaskQueue = %q AND ExecutionStatus = "Completed"`, tq))

	run := func() maintenance.ReconcileResult {
		t.Helper()
		h, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: tq}, maintenance.ReconcileWorkflowName,
			maintenance.ReconcileInput{TaskQueue: tq, ClosedWithin: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var res maintenance.ReconcileResult
		if err := h.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := run()
	t.Logf("first pass: %+v", first)
	if first.Report.MarkedFailed != 1 || first.WorkflowsScanned != 1 || first.Report.ResultSnapshotsChecked != 2 ||
		first.Report.ResultSnapshotsMissing != 1 || len(first.MissingSnapshots) != 1 || first.MissingSnapshots[0].SnapshotID != missing ||
		first.Report.ViolationCount() != 1 {
		t.Fatalf("first pass: %+v", first)
	}
	second := run()
	if second.Report.MarkedFailed != 0 || second.Report.ResultSnapshotsMissing != 1 {
		t.Fatalf("second pass: %+v", second)
	}
}

func waitVisible(t *testing.T, ctx context.Context, c client.Client, query string) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, "a workflow visible for "+query, func() (bool, error) {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.Executions) > 0, err
	})
}
