package draftordertest

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/registry"
)

// stack is one test's slice of the real stack.
type stack struct {
	t     testing.TB
	pool  *pgxpool.Pool
	store *evidence.Store
	tc    client.Client
	queue string
	specs []toolkit.Spec
}

// newStack wires the tools exactly as the worker does (wiringtest) and
// starts an in-process worker with opts.
func newStack(t testing.TB, opts worker.Options) *stack {
	t.Helper()
	// The pool is sized like a worker's should be for its activity
	// concurrency: pgxpool's default (max(4, cores)) makes parallel
	// activities queue for a connection.
	return newStackWith(t, wiringtest.Options{Worker: opts, MaxConns: 24})
}

// newStackWith is newStack with the stack's options given whole.
func newStackWith(t testing.TB, opts wiringtest.Options) *stack {
	t.Helper()
	ts := wiringtest.StartWith(t, opts)
	return &stack{t: t, pool: ts.Pool, store: ts.Store, tc: ts.Temporal, queue: ts.TaskQueue, specs: ts.Deps.Registry.Specs()}
}

// input is a draft order of items to a German address for user u_e2e.
func input(key string, items ...commerce.LineItem) draftorder.Input {
	return draftorder.Input{
		Request: toolkit.Request{
			RequestID: "req-" + key, UserID: "u_e2e", IdempotencyKey: key, Currency: "EUR", Locale: "de-DE",
			Actor:  toolkit.Actor{Type: toolkit.ActorUser, ID: "u_e2e"},
			Client: toolkit.Client{App: "backend", Version: "test"},
		},
		Order: commerce.Order{Items: items, ShipTo: commerce.Address{Name: "Erika Mustermann", Line1: "Invalidenstrasse 116", City: "Berlin", PostalCode: "10115", Country: "DE"}},
	}
}

// uniqueKey is an idempotency key no earlier test run used.
func uniqueKey(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%x", prefix, b)
}

// start starts (or attaches to) the draft order of in.
func (s *stack) start(ctx context.Context, in draftorder.Input) client.WorkflowRun {
	s.t.Helper()
	run, err := s.startE(ctx, in)
	if err != nil {
		s.t.Fatalf("start: %v", err)
	}
	return run
}

// startE is start for goroutines other than the test's, which must not
// call Fatal.
func (s *stack) startE(ctx context.Context, in draftorder.Input) (client.WorkflowRun, error) {
	opts, err := draftorder.StartOptions(s.queue, in)
	if err != nil {
		return nil, err
	}
	return s.tc.ExecuteWorkflow(ctx, opts, draftorder.WorkflowName, in)
}

// status queries a run.
func (s *stack) status(ctx context.Context, id string) (draftorder.Status, error) {
	var st draftorder.Status
	v, err := s.tc.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}

// awaitState polls the status query until the run is in state.
func (s *stack) awaitState(ctx context.Context, id, state string) draftorder.Status {
	s.t.Helper()
	for {
		st, err := s.status(ctx, id)
		if err == nil && st.State == state {
			return st
		}
		if err == nil && st.Result != nil {
			s.t.Fatalf("%s ended in %s (%s) while waiting for %s", id, st.Result.State, st.Result.Message, state)
		}
		if d, derr := s.tc.DescribeWorkflowExecution(ctx, id, ""); derr == nil &&
			d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			s.t.Fatalf("%s closed (%s) while waiting for %s", id, d.GetWorkflowExecutionInfo().GetStatus(), state)
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("%s never reached %s (last: %+v, %v)", id, state, st.State, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// temporalCLI is the pinned CLI binary `make tools` builds.
func temporalCLI(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CARTWRIGHT_TEMPORAL_CLI"); p != "" {
		return p
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root not found")
		}
		dir = parent
	}
	p := filepath.Join(dir, ".bin", "temporal")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("temporal CLI not found at %s: run `make tools`", p)
	}
	return p
}

// cli runs the temporal CLI against the test server and returns its output.
func cli(t testing.TB, args ...string) string {
	t.Helper()
	args = append(args, "--address", testenv.TemporalAddress(), "--namespace", "default")
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()
	out, err := exec.CommandContext(ctx, temporalCLI(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("temporal %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// verifyEvidence checks every tool answer of the run's completed
// activities: it names an evidence snapshot, the snapshot belongs to this
// workflow and tool, and its stored hash is the canonical hash of the data
// the history holds (toolkit.CanonicalHash(envelope.data), of
// envelope.error for a refusal). Local activities (their markers) count
// like regular ones, and a quote step's result holds one answer per call
// (calls[].envelope). It returns how many answers it checked.
func (s *stack) verifyEvidence(ctx context.Context, id, runID string) int {
	s.t.Helper()
	iter := s.tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	dc := clienttest.DataConverter()
	n := 0
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			s.t.Fatalf("history of %s: %v", id, err)
		}
		result := toolResult(ev)
		if result == nil {
			continue
		}
		var res struct {
			Envelope *toolkit.Response `json:"envelope"`
			Calls    []struct {
				Envelope toolkit.Response `json:"envelope"`
			} `json:"calls"`
		}
		if err := dc.FromPayloads(result, &res); err != nil {
			s.t.Fatalf("event %d: decode activity result: %v", ev.GetEventId(), err)
		}
		envs := []toolkit.Response{}
		if res.Envelope != nil {
			envs = append(envs, *res.Envelope)
		}
		for _, c := range res.Calls {
			envs = append(envs, c.Envelope)
		}
		if len(envs) == 0 {
			s.t.Fatalf("event %d: an activity result without a tool answer", ev.GetEventId())
		}
		for _, env := range envs {
			s.checkSnapshot(ctx, ev.GetEventId(), id, env)
			n++
		}
	}
	return n
}

// checkSnapshot checks one tool answer of event against its snapshot.
func (s *stack) checkSnapshot(ctx context.Context, event int64, id string, env toolkit.Response) {
	s.t.Helper()
	snapID := env.SnapshotID()
	if snapID == "" {
		s.t.Fatalf("event %d: %s result names no evidence snapshot", event, env.Tool)
	}
	snap, err := s.store.Get(ctx, snapID)
	if err != nil {
		s.t.Fatalf("event %d: snapshot %s: %v", event, snapID, err)
	}
	evidenced := any(env.Data)
	if !env.OK {
		evidenced = env.Error // a refusal's evidence is its error object
	}
	hash, err := toolkit.CanonicalHash(evidenced)
	if err != nil {
		s.t.Fatal(err)
	}
	if snap.OutputHash != hash || env.Evidence.Sources[0].Hash != hash || snap.Tool != env.Tool || snap.WorkflowID != id {
		s.t.Fatalf("event %d: snapshot %s (tool %s, workflow %s, hash %s) does not match the history (tool %s, hash %s)",
			event, snapID, snap.Tool, snap.WorkflowID, snap.OutputHash, env.Tool, hash)
	}
}

// toolResult is the result of a completed activity: a regular one's, or a
// local activity's from its marker (the read-only tools, docs/performance.md#local-activities);
// nil for any other event.
func toolResult(ev *historypb.HistoryEvent) *commonpb.Payloads {
	if done := ev.GetActivityTaskCompletedEventAttributes(); done != nil {
		return done.GetResult()
	}
	m := ev.GetMarkerRecordedEventAttributes()
	if m.GetMarkerName() != "LocalActivity" || m.GetFailure() != nil {
		return nil
	}
	return m.GetDetails()["result"]
}

// draftRows counts draft-order rows of an idempotency key.
func (s *stack) draftRows(ctx context.Context, key string) int {
	s.t.Helper()
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM draft_orders WHERE idempotency_key = $1`, key).Scan(&n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// replay runs the closed run's history through the current workflow code:
// any non-determinism (a command the code no longer issues in the same
// order) fails it.
func (s *stack) replay(ctx context.Context, id, runID string) {
	s.t.Helper()
	iter := s.tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			s.t.Fatal(err)
		}
		hist.Events = append(hist.Events, ev)
	}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: clienttest.DataConverter()})
	if err != nil {
		s.t.Fatal(err)
	}
	registry.Register(r, s.specs)
	// The original ids matter: the workflow checks its id against the
	// user and key, and correlation ids derive from both.
	err = r.ReplayWorkflowHistoryWithOptions(nil, hist, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id, RunID: runID},
	})
	if err != nil {
		s.t.Fatalf("replay of %s: %v", id, err)
	}
}
