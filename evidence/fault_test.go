package evidence

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// faultWorkflow runs n tool activities one after another, pausing between
// them so the database outage lands in the middle of the run.
func faultWorkflow(ctx workflow.Context, n int) ([]string, error) {
	//workflowcheck:ignore
	nonRetryable := toolkit.NonRetryableCodes() // sorted: deterministic
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 15 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 1.5,
			MaximumInterval: time.Second, NonRetryableErrorTypes: nonRetryable},
	})
	var ids []string
	for i := 1; i <= n; i++ {
		var id string
		if err := workflow.ExecuteActivity(ctx, "FaultToolCall", i).Get(ctx, &id); err != nil {
			return ids, err
		}
		ids = append(ids, id)
		_ = workflow.Sleep(ctx, 200*time.Millisecond)
	}
	return ids, nil
}

func TestSnapshotsSurviveDatabaseRestart(t *testing.T) {
	testenv.Integration(t)
	cluster := testenv.StartPrivateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()

	dsn, err := testenv.PrepareDatabase(ctx, cluster.DSN("postgres"), "cw_fault")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	cipher, _ := NewAESGCM("fault-1", key)
	store, _ := NewStore(pool, cipher, nil)
	store.SignWith(testSigner(t, WriterWorker))

	var toolCalls, storeFailures atomic.Int64
	inv := testInvoker(t, store, func(ctx context.Context, call *toolkit.Call) (*toolkit.Output, error) {
		toolCalls.Add(1)
		var in struct{ N int }
		_ = call.Bind(&in)
		return &toolkit.Output{Data: map[string]any{"step": in.N, "answer": in.N * 7}}, nil
	})
	faultToolCall := func(ctx context.Context, n int) (string, error) {
		resp, err := inv.Invoke(toolkit.WithCall(ctx, activityCall(ctx)), testTool, testRequest(fmt.Sprintf("req-fault-%d", n)), map[string]any{"n": n})
		if err != nil {
			if toolkit.CodeOf(err) == toolkit.UpstreamError {
				storeFailures.Add(1)
			}
			activity.GetLogger(ctx).Info("tool call failed", "code", toolkit.CodeOf(err), "attempt", activity.GetInfo(ctx).Attempt)
			return "", applicationError(err)
		}
		return resp.SnapshotID(), nil
	}

	c := clienttest.Dial(t)
	tq := testenv.TaskQueue(t)
	w := worker.New(c, tq, worker.Options{})
	w.RegisterWorkflowWithOptions(faultWorkflow, workflow.RegisterOptions{Name: "EvidenceFaultWorkflow"})
	w.RegisterActivityWithOptions(faultToolCall, activity.RegisterOptions{Name: "FaultToolCall"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	const steps = 12
	wfID := "evidence-fault-" + tq
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wfID, TaskQueue: tq}, "EvidenceFaultWorkflow", steps)
	if err != nil {
		t.Fatal(err)
	}

	// Let a few calls land, then take the database away mid-run.
	countRows := func() int {
		var n int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM evidence_snapshots WHERE workflow_id = $1`, wfID).Scan(&n)
		return n
	}
	deadline := time.Now().Add(testenv.Deadline(60 * time.Second))
	for countRows() < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the workflow never got going")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cluster.Stop()
	t.Log("postgres stopped")
	// Down until a call met the outage (its evidence write failed), then
	// back: the outage lasts as long as it takes to matter, on any machine.
	testenv.WaitFor(t, 60*time.Second, "a tool call failed on the stopped database", func() (bool, error) {
		return storeFailures.Load() > 0, nil
	})
	cluster.Start()
	t.Log("postgres started again")

	var ids []string
	if err := run.Get(ctx, &ids); err != nil {
		t.Fatalf("workflow did not complete after the restart: %v", err)
	}
	if storeFailures.Load() == 0 {
		t.Fatal("no call failed during the outage: the test did not test anything")
	}
	var rows, distinctActivities, distinctIDs int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT activity_id), count(DISTINCT snapshot_id)
		FROM evidence_snapshots WHERE workflow_id = $1`, wfID).Scan(&rows, &distinctActivities, &distinctIDs); err != nil {
		t.Fatal(err)
	}
	t.Logf("tool calls %d (attempts that reached the tool), store failures %d, snapshots %d", toolCalls.Load(), storeFailures.Load(), rows)
	if len(ids) != steps || rows != steps || distinctActivities != steps || distinctIDs != steps {
		t.Fatalf("%d completed calls, %d snapshots over %d activities: want %d each, no duplicates", len(ids), rows, distinctActivities, steps)
	}
	missing, err := MissingSnapshots(ctx, pool, ids)
	if err != nil || len(missing) > 0 {
		t.Fatalf("snapshots named in the result are missing: %v %v", missing, err)
	}
	rep, err := store.Verify(ctx, wfID)
	if err != nil || !rep.OK || rep.Rows != steps {
		t.Fatalf("chain after the restart: %+v %v", rep, err)
	}
}

// activityCall is what the activities package tells the invoker about the
// running activity (this package cannot import it: activities imports evidence).
func activityCall(ctx context.Context) toolkit.CallContext {
	info := activity.GetInfo(ctx)
	return toolkit.CallContext{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID,
		ActivityID: info.ActivityID, ActivityType: info.ActivityType.Name, Attempt: info.Attempt}
}

// applicationError is the activity's Temporal error: retryable as its code is.
func applicationError(err error) error {
	te := toolkit.AsError(err)
	return temporal.NewApplicationErrorWithOptions(te.Message, string(te.Code),
		temporal.ApplicationErrorOptions{NonRetryable: !te.Code.Retryable()})
}
