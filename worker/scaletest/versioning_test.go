package scaletest

import (
	"context"
	"os"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/registry"
)

// draftOrderB is build B's DraftOrder: the same workflow with a timer
// first, a change that breaks every history build A wrote (replaying one
// meets a timer where the history has an activity).
func draftOrderB(ctx workflow.Context, in draftorder.Input) (draftorder.Result, error) {
	if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
		return draftorder.Result{}, err
	}
	draftOrder := registry.Registry(wiring.ToolSpecs())[draftorder.WorkflowName].(func(workflow.Context, draftorder.Input) (draftorder.Result, error))
	return draftOrder(ctx, in)
}

// TestDeployBesideRunningBuild is a deploy with Worker Versioning on the
// dev server: build A serves a Worker Deployment and starts draft orders,
// which wait for their users; build B, whose DraftOrder changed
// incompatibly, is deployed beside A and made current; the waiting orders,
// pinned, finish on A, new orders start and finish on B, and none fails a
// workflow task. Auditing an A history with B's code reports the
// non-determinism, as the replay tests in CI would for an unpinned change.
func TestDeployBesideRunningBuild(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(5*time.Minute))
	defer cancel()
	ws := wiringtest.Start(t)
	// A further deployment of cartwright: on a cluster that authorizes
	// calls, only cartwright's queues (cartwright-*) may be polled
	// (docs/operators.md#who-may-do-what-on-the-cluster).
	tq := "cartwright-" + testenv.TaskQueue(t)
	deployment := "cw-test-" + randomHex(4)
	startBuild := func(build string, registerWorkflows func(worker.Registry)) {
		w := worker.New(ws.Temporal, tq, worker.Options{DeploymentOptions: worker.DeploymentOptions{
			UseVersioning: true, Version: worker.WorkerDeploymentVersion{DeploymentName: deployment, BuildID: build},
			DefaultVersioningBehavior: workflow.VersioningBehaviorPinned,
		}})
		registerWorkflows(w)
		ws.Deps.RegisterRoles(w, wiring.Roles{Activities: true})
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		setCurrent(ctx, t, ws.Temporal, deployment, build)
	}
	t.Setenv("TEMPORAL_ADDRESS", testenv.TemporalAddress())
	t.Setenv("TEMPORAL_NAMESPACE", "default")
	// The workers above are the worker's identity; the orders come from
	// the backend's (make test-cluster names it).
	if id := os.Getenv("CARTWRIGHT_TEST_STARTER_OIDC_CLIENT_ID"); id != "" {
		t.Setenv("CARTWRIGHT_OIDC_CLIENT_ID", id)
		t.Setenv("CARTWRIGHT_OIDC_CLIENT_SECRET_FILE", os.Getenv("CARTWRIGHT_TEST_STARTER_OIDC_CLIENT_SECRET_FILE"))
	}
	cl, err := client.New(ctx, envOptions(t, tq))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// Build A, and three orders waiting for their users on it.
	startBuild("A", func(r worker.Registry) { registry.Register(r, ws.Deps.Registry.Specs()) })
	var old []string
	for i := 0; i < 3; i++ {
		h, err := cl.StartDraftOrder(ctx, orderInput("ver-a-"+randomHex(6)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.WaitForAction(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute))); err != nil {
			t.Fatal(err)
		}
		old = append(old, h.WorkflowID)
	}

	// Build B beside it, current from now on.
	startBuild("B", func(r worker.Registry) {
		for name, fn := range registry.Registry(ws.Deps.Registry.Specs()) {
			if name == draftorder.WorkflowName {
				fn = draftOrderB
			}
			r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
		}
	})

	// The old orders are confirmed now and finish on A; new ones run on B.
	for _, id := range old {
		st, err := cl.Status(ctx, id)
		if err != nil || st.Confirmation == nil {
			t.Fatalf("%s: %+v %v", id, st, err)
		}
		if err := cl.Confirm(ctx, id, st.Confirmation.QuoteHash); err != nil {
			t.Fatal(err)
		}
	}
	var fresh []string
	for i := 0; i < 3; i++ {
		id, err := driveOrder(ctx, cl, "ver-b-"+randomHex(6))
		if err != nil {
			t.Fatal(err)
		}
		fresh = append(fresh, id)
	}
	for _, id := range old {
		res, err := cl.WaitResult(ctx, id, time.Now().Add(testenv.Deadline(time.Minute)))
		if err != nil || res.State != draftorder.StateDraftCreated {
			t.Fatalf("old order %s: %+v %v", id, res, err)
		}
	}
	for _, c := range []struct {
		ids   []string
		build string
		timer bool
	}{{old, "A", false}, {fresh, "B", true}} {
		for _, id := range c.ids {
			checkRanOn(ctx, t, ws.Temporal, id, deployment, c.build, c.timer)
		}
	}

	// Replaying an A history with B's code: what CI's replay tests catch.
	changed := registry.Registry(ws.Deps.Registry.Specs())
	changed[draftorder.WorkflowName] = draftOrderB
	rep, err := audit.Audit(ctx, audit.Deps{Temporal: ws.Temporal, Evidence: ws.Store, Workflows: changed}, audit.ByID(old[0], ""))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Clean || len(rep.Findings) == 0 || rep.Findings[0].Kind != audit.KindNondeterminism {
		t.Fatalf("replaying build A's history with build B's code: %+v", rep.Findings)
	}
	t.Logf("3 orders pinned to A finished on A after B became current; 3 new orders ran on B; A's history under B's code: %s", rep.Findings[0].Kind)
}

// setCurrent makes build the deployment's current version, once a worker
// of it has polled (the server knows a version only then).
func setCurrent(ctx context.Context, t *testing.T, tc sdkclient.Client, deployment, build string) {
	t.Helper()
	h := tc.WorkerDeploymentClient().GetHandle(deployment)
	deadline := time.Now().Add(testenv.Deadline(time.Minute))
	for {
		_, err := h.SetCurrentVersion(ctx, sdkclient.WorkerDeploymentSetCurrentVersionOptions{BuildID: build})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("set current version %s/%s: %v", deployment, build, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkRanOn: the run closed pinned to build, every workflow task it
// completed was completed by that build, none failed, and build B's timer
// is in its history exactly when it should be.
func checkRanOn(ctx context.Context, t *testing.T, tc sdkclient.Client, id, deployment, build string, wantTimer bool) {
	t.Helper()
	d, err := tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	vi := d.GetWorkflowExecutionInfo().GetVersioningInfo()
	if v := vi.GetDeploymentVersion(); vi.GetBehavior() != enumspb.VERSIONING_BEHAVIOR_PINNED ||
		v.GetDeploymentName() != deployment || v.GetBuildId() != build {
		t.Fatalf("%s: versioning %v, want pinned to %s/%s", id, vi, deployment, build)
	}
	it := tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	timer := false
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			t.Fatalf("%s: workflow task failed: %v", id, e.GetWorkflowTaskFailedEventAttributes().GetFailure())
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			// B's timer is the 1 ms one; the workflow's own timers
			// (confirm and approval windows) are minutes.
			if e.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration() == time.Millisecond {
				timer = true
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			if got := e.GetWorkflowTaskCompletedEventAttributes().GetDeploymentVersion().GetBuildId(); got != build {
				t.Fatalf("%s: a workflow task completed by build %q, want %q", id, got, build)
			}
		}
	}
	if timer != wantTimer {
		t.Fatalf("%s: build B's timer in history = %v, want %v", id, timer, wantTimer)
	}
}
