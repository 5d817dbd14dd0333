// Package teststack runs the DraftOrder workflow end to end for tests
// outside the workflows package (the client, the starter CLI): a fresh
// migrated database, the real tool registry, invoker and evidence store,
// and an in-process worker on a task queue of its own, against the dev
// server `make test` starts. It wires the tools exactly as the worker does
// (worker/commerce.go, worker/draftorder.go).
package teststack

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// Stack is one test's slice of the real stack.
type Stack struct {
	// DSN is the test database (superuser); Pool is open on it.
	DSN  string
	Pool *pgxpool.Pool
	// EvidenceKey is the base64 evidence key (CARTWRIGHT_EVIDENCE_KEY),
	// EvidenceKeyID its id.
	EvidenceKey, EvidenceKeyID string
	Store                      *evidence.Store
	Temporal                   client.Client
	TaskQueue                  string
}

// Options tune the stack StartWith builds.
type Options struct {
	// Worker are the in-process worker's options.
	Worker worker.Options
	// MaxConns sizes the pool (0: pgxpool's default, the larger of 4 and
	// the core count).
	MaxConns int32
}

// Start builds the stack and starts a worker serving DraftOrder (and the
// Onboarding workflow without its activities, enough for its status
// query); everything stops at cleanup, and onboardings it ran are
// terminated.
func Start(t testing.TB) *Stack {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with the pool and the worker tuned by opts.
func StartWith(t testing.TB, opts Options) *Stack {
	t.Helper()
	testenv.Integration(t)
	s := &Stack{DSN: testenv.Database(t), EvidenceKey: evidencetest.Key(), EvidenceKeyID: evidencetest.KeyID, TaskQueue: testenv.TaskQueue(t)}
	pool, err := db.Open(context.Background(), s.DSN, db.MaxConns(opts.MaxConns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s.Pool = pool
	var cipher *evidence.AESGCM
	s.Store, cipher = evidencetest.StoreWithKey(t, pool, nil, s.EvidenceKey)
	reg := toolkit.NewRegistry(schemas.FS)
	if err := commerce.RegisterTools(reg, commerce.ToolDeps{Pool: pool, Audit: s.Store, Sealer: cipher}); err != nil {
		t.Fatal(err)
	}
	if err := support.RegisterTools(reg, pool); err != nil {
		t.Fatal(err)
	}
	workflows.UseToolSpecs(reg.Specs()...)
	inv := toolkit.NewInvoker(reg, s.Store, zap.NewNop())

	s.Temporal = testenv.TemporalClient(t)
	w := worker.New(s.Temporal, s.TaskQueue, opts.Worker)
	workflows.Register(w)
	w.RegisterActivity(&activities.Commerce{Invoker: inv})
	w.RegisterActivity(&activities.Tools{Invoker: inv})
	w.RegisterActivity(&activities.Approval{Invoker: inv})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return s
}

// TerminateLater terminates the workflow at cleanup (an onboarding never
// ends on its own here: its activities are not registered).
func (s *Stack) TerminateLater(t testing.TB, workflowID string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Temporal.TerminateWorkflow(ctx, workflowID, "", "test over")
	})
}

// Env sets the environment the client and the starter read, pointing them
// at this stack (t.Setenv: the test must not be parallel).
func (s *Stack) Env(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", testenv.TemporalAddress())
	t.Setenv("TEMPORAL_NAMESPACE", "default")
	t.Setenv("CARTWRIGHT_TASK_QUEUE", s.TaskQueue)
	t.Setenv("CARTWRIGHT_PG_DSN", s.DSN)
	t.Setenv("CARTWRIGHT_EVIDENCE_KEY", s.EvidenceKey)
	t.Setenv("CARTWRIGHT_EVIDENCE_KEY_ID", s.EvidenceKeyID)
}
