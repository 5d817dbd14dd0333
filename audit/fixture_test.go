package audit_test

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/archive"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// The fixture is a small workflow of three tool calls through the real
// invoker and evidence store: two in parallel, then one whose first attempt
// answers (leaving a snapshot) and then fails, as a worker dying after the
// tool call would.

const fixtureName = "AuditFixture"

var fixtureSchemas = fstest.MapFS{
	"echo.input.json": {Data: []byte(`{"$schema": "http://json-schema.org/draft-07/schema#",
		"$id": "https://cartwright.dev/schemas/test/audit-echo.input.json", "type": "object",
		"additionalProperties": false, "required": ["step"],
		"properties": {"step": {"type": "integer"}, "attempt": {"type": "integer"}, "note": {"type": "string"}}}`)},
	"echo.output.json": {Data: []byte(`{"$schema": "http://json-schema.org/draft-07/schema#",
		"$id": "https://cartwright.dev/schemas/test/audit-echo.output.json", "type": "object", "required": ["step"]}`)},
}

type echoArgs struct {
	Step    int    `json:"step"`
	Attempt int32  `json:"attempt,omitempty"`
	Note    string `json:"note,omitempty"`
}

type echoIn struct {
	Request toolkit.Request `json:"request"`
	Args    echoArgs        `json:"args"`
	// LoseFirst makes attempt 1 fail after the tool answered.
	LoseFirst bool `json:"lose_first,omitempty"`
}

type echoOut struct {
	Echo     echoArgs         `json:"echo"`
	Envelope toolkit.Response `json:"envelope"`
}

type fixtureActs struct{ inv *toolkit.Invoker }

func (f *fixtureActs) Echo(ctx context.Context, in echoIn) (echoOut, error) {
	attempt := activity.GetInfo(ctx).Attempt
	if in.LoseFirst {
		in.Args.Attempt = attempt // a different answer per attempt: one snapshot each
	}
	env, err := activities.Call(ctx, f.inv, "test.echo", in.Request, in.Args)
	if err != nil {
		return echoOut{}, err
	}
	if !env.OK {
		return echoOut{}, activities.ApplicationError(env.Error)
	}
	var d echoArgs
	if err := env.Decode(&d); err != nil {
		return echoOut{}, err
	}
	if in.LoseFirst && attempt == 1 {
		return echoOut{}, errors.New("fixture: the worker lost the answer after the evidence was written")
	}
	return echoOut{Echo: d, Envelope: env}, nil
}

func fixtureRequest() toolkit.Request {
	return toolkit.Request{RequestID: "req-audit", Actor: toolkit.Actor{Type: toolkit.ActorSystem, ID: "audit-test"}, UserID: "u_audit"}
}

func fixtureOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 20 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 50 * time.Millisecond, MaximumAttempts: 3},
	})
}

// auditFixture is the original workflow code.
func auditFixture(ctx workflow.Context, note string) ([]string, error) {
	ctx = fixtureOptions(ctx)
	var a *fixtureActs
	req := fixtureRequest()
	f1 := workflow.ExecuteActivity(ctx, a.Echo, echoIn{Request: req, Args: echoArgs{Step: 1, Note: note}})
	f2 := workflow.ExecuteActivity(ctx, a.Echo, echoIn{Request: req, Args: echoArgs{Step: 2, Note: note}})
	var ids []string
	for _, f := range []workflow.Future{f1, f2} {
		var out echoOut
		if err := f.Get(ctx, &out); err != nil {
			return nil, err
		}
		ids = append(ids, out.Envelope.SnapshotID())
	}
	var out echoOut
	if err := workflow.ExecuteActivity(ctx, a.Echo, echoIn{Request: req, Args: echoArgs{Step: 3}, LoseFirst: true}).Get(ctx, &out); err != nil {
		return nil, err
	}
	return append(ids, out.Envelope.SnapshotID()), nil
}

// auditFixtureChanged is a non-deterministic change of auditFixture: it
// waits before the first calls, which the recorded history never did.
func auditFixtureChanged(ctx workflow.Context, note string) ([]string, error) {
	if err := workflow.Sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	return auditFixture(ctx, note)
}

// stack is the real stack the integration tests audit against.
type stack struct {
	c     client.Client
	pool  *pgxpool.Pool
	store *evidence.Store
	arch  *archive.Store
	tq    string
	deps  audit.Deps
}

func newStack(t *testing.T) *stack {
	t.Helper()
	s := &stack{c: clienttest.Dial(t), pool: testenv.Postgres(t), tq: testenv.TaskQueue(t)}
	logger := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	store, cipher := evidencetest.Store(t, s.pool, logger)
	arch, err := archive.NewStore(s.pool, cipher)
	if err != nil {
		t.Fatal(err)
	}
	s.store, s.arch = store, arch
	reg := toolkit.NewRegistry(fixtureSchemas)
	reg.MustRegister(toolkit.Spec{
		Name: "test.echo", Version: "1.0.0",
		Description: "Echoes its input. Use in audit tests; succeeds for any valid input; never fails.",
		InputSchema: "echo.input.json", OutputSchema: "echo.output.json",
		Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
		TTL:         time.Minute, Timeout: 5 * time.Second, EvidenceRequired: true, Provider: "test",
	}, func(_ context.Context, call *toolkit.Call) (*toolkit.Output, error) {
		var in echoArgs
		if err := call.Bind(&in); err != nil {
			return nil, err
		}
		return &toolkit.Output{Data: in, RulesetVersion: "test-1"}, nil
	})
	w := worker.New(s.c, s.tq, worker.Options{})
	w.RegisterWorkflowWithOptions(auditFixture, workflow.RegisterOptions{Name: fixtureName})
	w.RegisterActivity(&fixtureActs{inv: toolkit.NewInvoker(reg, s.store, logger)})
	w.RegisterWorkflowWithOptions(maintenance.ArchiveHistories, workflow.RegisterOptions{Name: maintenance.ArchiveHistoriesWorkflowName})
	w.RegisterActivity(&activities.Archive{Temporal: s.c, Store: s.arch})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	s.deps = audit.Deps{Temporal: s.c, Evidence: s.store, Archive: s.arch, Logger: logger, DataConverter: clienttest.DataConverter(),
		Workflows: map[string]any{fixtureName: auditFixture}}
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(90*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// runFixture runs the fixture to completion and returns its run id and the
// three snapshot ids its activities named.
func (s *stack) runFixture(t *testing.T, id string) (string, []string) {
	t.Helper()
	ctx := ctxT(t)
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: s.tq}, fixtureName, "hello")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := run.Get(ctx, &ids); err != nil {
		t.Fatalf("fixture %s: %v", id, err)
	}
	return run.GetRunID(), ids
}
