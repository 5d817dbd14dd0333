package commerce

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// env is one test's stack: a fresh migrated database, the real evidence
// store (snapshots and audit), the real registry and invoker.
type env struct {
	pool   *pgxpool.Pool
	store  *evidence.Store
	cipher *evidence.AESGCM
	inv    *toolkit.Invoker
	now    atomic.Pointer[time.Time]
}

func newEnv(t *testing.T, mutate ...func(*ToolDeps)) *env {
	t.Helper()
	return newEnvOn(t, testenv.Postgres(t), mutate...)
}

// newEnvOn is newEnv on a pool of the test's own (one with a tracer).
func newEnvOn(t *testing.T, pool *pgxpool.Pool, mutate ...func(*ToolDeps)) *env {
	t.Helper()
	e := &env{pool: pool}
	e.store, e.cipher = evidencetest.Store(t, e.pool, nil)
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	e.now.Store(&start)
	deps := ToolDeps{Pool: e.pool, Audit: e.store, Sealer: e.cipher, Unsealed: true, Clock: func() time.Time { return *e.now.Load() }}
	for _, m := range mutate {
		m(&deps)
	}
	reg := toolkit.NewRegistry(schemas.FS)
	if err := RegisterTools(reg, deps); err != nil {
		t.Fatal(err)
	}
	e.inv = toolkit.NewInvoker(reg, e.store, nil)
	return e
}

// advance moves the tools' clock.
func (e *env) advance(d time.Duration) {
	n := e.now.Load().Add(d)
	e.now.Store(&n)
}

var reqSeq atomic.Int64

// request is a user's envelope; each call gets its own request and
// correlation id unless the caller overrides them.
func request(user, key string) toolkit.Request {
	n := reqSeq.Add(1)
	return toolkit.Request{
		RequestID: fmt.Sprintf("req-%d", n), Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: user}, UserID: user,
		IdempotencyKey: key, CorrelationID: fmt.Sprintf("corr-%016x", uint64(time.Now().UnixNano())+uint64(n)),
	}
}

func invoke[T any](t *testing.T, e *env, tool string, req toolkit.Request, in any) (T, *toolkit.Response, error) {
	t.Helper()
	var out T
	resp, err := e.inv.Invoke(context.Background(), tool, req, in)
	if err == nil {
		if derr := resp.Decode(&out); derr != nil {
			t.Fatalf("decode %s: %v", tool, derr)
		}
	}
	return out, resp, err
}

func wantCode(t *testing.T, err error, code toolkit.Code) *toolkit.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s, got success", code)
	}
	te := toolkit.AsError(err)
	if te.Code != code {
		t.Fatalf("want %s, got %s: %s (details %v)", code, te.Code, te.Message, te.Details)
	}
	return te
}

// failingAudit refuses to write audit rows: the database behind the
// audit is down.
type failingAudit struct{ AuditLog }

func (failingAudit) WriteAtomic(context.Context, evidence.AuditEntry, evidence.AtomicWrite) error {
	return errors.New("connection refused")
}

func (failingAudit) WritePending(context.Context, evidence.AuditEntry) (int64, error) {
	return 0, errors.New("connection refused")
}

// computeParts is checkout.compute_total's arithmetic on parts the test
// names itself (the tool derives them from a workflow's evidence).
func computeParts(p TotalParts) (Total, *toolkit.Response, error) {
	t, err := ComputeTotal(p)
	return t, nil, err
}
