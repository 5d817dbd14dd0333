// Package wiringtest runs a whole cartwright worker inside a test: a fresh
// migrated database, every tool, workflow and activity built by package
// wiring exactly as the worker binary builds them, and an in-process worker
// on a task queue of its own against the dev server `make test` starts.
package wiringtest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/client/clienttest"
	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/commerce/quotesealtest"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/telemetry"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

// Stack is one test's slice of the real stack.
type Stack struct {
	// DSN is the test database, as the runtime role
	// (docs/evidence.md#database-roles); Pool is open on it.
	DSN  string
	Pool *pgxpool.Pool
	// EvidenceKey is the base64 evidence key (CARTWRIGHT_EVIDENCE_KEY),
	// EvidenceKeyID its id.
	EvidenceKey, EvidenceKeyID string
	Store                      *evidence.Store
	Temporal                   client.Client
	TaskQueue                  string
	// Deps is what the wiring built: registry, invoker, tool clients,
	// webhook receiver.
	Deps *wiring.Deps
	// Worker is the stack's worker (stopped at cleanup; a test may stop it
	// sooner to hand the task queue to another).
	Worker worker.Worker
}

// Options tune the stack StartWith builds.
type Options struct {
	// Worker are the in-process worker's options.
	Worker worker.Options
	// MaxConns sizes the pool (0: pgxpool's default, the larger of 4 and
	// the core count).
	MaxConns int32
	// Logger receives every log line (nil: none).
	Logger *zap.Logger
	// Clock replaces time.Now in the commerce tools.
	Clock func() time.Time
	// Configure adjusts the configuration the stack builds from (for
	// example a fake Stripe's address and secrets).
	Configure func(*config.Config)
	// Temporal is the client the stack uses (nil: clienttest.Dial, the
	// shared test dev server); a test with a dev server of its own passes
	// clienttest.DialAt's.
	Temporal client.Client
	// Telemetry, when set, observes the tool pipeline, evidence writes and
	// audits as the worker's does; the test instruments its Temporal
	// client with it too (cartwright's client.Instrument).
	Telemetry *telemetry.Telemetry
}

// Start builds the stack and starts a worker serving every workflow and
// activity; everything stops at cleanup.
func Start(t testing.TB) *Stack {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start tuned by opts.
func StartWith(t testing.TB, opts Options) *Stack {
	t.Helper()
	testenv.Integration(t)
	s := &Stack{DSN: testenv.Database(t), EvidenceKey: evidencetest.Key(), EvidenceKeyID: evidencetest.KeyID}
	pool, err := db.Open(context.Background(), s.DSN, db.MaxConns(opts.MaxConns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s.Pool = pool
	s.Temporal = opts.Temporal
	if s.Temporal == nil {
		s.Temporal = clienttest.Dial(t)
	}
	s.TaskQueue, s.Deps, s.Worker = s.startWorker(t, opts, testenv.TaskQueue(t))
	s.Store = s.Deps.Evidence
	return s
}

// AddWorker builds the whole wiring once more on the stack's database and
// evidence key (tuned by opts: clock, configuration, logger, worker options;
// MaxConns is the stack's) and starts a worker for it on a task queue of its
// own, returned with what it built.
func (s *Stack) AddWorker(t testing.TB, opts Options) (string, *wiring.Deps) {
	t.Helper()
	tq, deps, _ := s.startWorker(t, opts, testenv.TaskQueue(t))
	return tq, deps
}

// WorkerOn starts one more worker on taskQueue, built like AddWorker's;
// opts.Temporal, when set, is its client (and so its payload codec).
func (s *Stack) WorkerOn(t testing.TB, opts Options, taskQueue string) worker.Worker {
	t.Helper()
	_, _, w := s.startWorker(t, opts, taskQueue)
	return w
}

func (s *Stack) startWorker(t testing.TB, opts Options, tq string) (string, *wiring.Deps, worker.Worker) {
	t.Helper()
	tc := s.Temporal
	if opts.Temporal != nil {
		tc = opts.Temporal
	}
	cfg := Config(tq, s.EvidenceKey)
	if opts.Configure != nil {
		opts.Configure(&cfg)
	}
	logger := opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	deps, err := wiring.BuildFor(ctx, wiring.Base{Config: cfg, Logger: logger, Pool: s.Pool, Temporal: tc, Clock: opts.Clock,
		Telemetry: opts.Telemetry}, wiring.AllRoles)
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(tc, cfg.TaskQueue, opts.Worker)
	deps.RegisterRoles(w, wiring.AllRoles)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return cfg.TaskQueue, deps, w
}

// Config is the configuration of a test stack: the defaults, on taskQueue,
// with the evidence key and the test stack's stripe-mock.
func Config(taskQueue, evidenceKey string) config.Config {
	cfg, err := config.Defaults()
	if err != nil {
		panic(err) // the defaults are constants: a failure is a bug here
	}
	cfg.TaskQueue = taskQueue
	cfg.EvidenceKey, cfg.EvidenceKeyID = evidenceKey, evidencetest.KeyID
	cfg.PayloadKeys, cfg.PayloadKeyID = codectest.Spec(), codectest.KeyID
	cfg.SealKeys, cfg.SealKeyID = sealtest.Spec(), sealtest.KeyID
	cfg.QuoteSealKeys, cfg.QuoteSealKeyID = quotesealtest.Spec(), quotesealtest.KeyID
	cfg.WorkerSigningKeys, cfg.GatewaySigningKeys = evidencetest.WorkerSigningRing, evidencetest.GatewaySigningRing
	cfg.WorkerRowPublicKeys, cfg.GatewayRowPublicKeys = evidencetest.WorkerPublicRing, evidencetest.GatewayPublicRing
	cfg.StripeAPIBase = testenv.StripeAPIBase()
	return cfg
}

// TerminateLater terminates the workflow at cleanup (an onboarding waits for
// its merchant far longer than a test).
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
	t.Setenv("CARTWRIGHT_PG_ISSUER_DSN", testenv.IssuerDSNFor(s.DSN))
	t.Setenv("CARTWRIGHT_EVIDENCE_KEY", s.EvidenceKey)
	t.Setenv("CARTWRIGHT_EVIDENCE_KEY_ID", s.EvidenceKeyID)
	t.Setenv("CARTWRIGHT_PAYLOAD_KEYS", codectest.Spec())
	t.Setenv("CARTWRIGHT_PAYLOAD_KEY_ID", codectest.KeyID)
	t.Setenv("CARTWRIGHT_SEAL_KEYS", sealtest.Spec())
	t.Setenv("CARTWRIGHT_SEAL_KEY_ID", sealtest.KeyID)
	t.Setenv("CARTWRIGHT_QUOTE_SEAL_KEYS", quotesealtest.Spec())
	t.Setenv("CARTWRIGHT_WORKER_SIGNING_KEYS", evidencetest.WorkerSigningRing)
	t.Setenv("CARTWRIGHT_GATEWAY_SIGNING_KEYS", evidencetest.GatewaySigningRing)
	t.Setenv("CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS", evidencetest.WorkerPublicRing)
	t.Setenv("CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS", evidencetest.GatewayPublicRing)
}

// ServeCodec serves the stack's codec server (as the worker does on
// CARTWRIGHT_CODEC_ADDR) until cleanup and returns its endpoint,
// http://127.0.0.1:port/codec.
func (s *Stack) ServeCodec(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(s.Deps.Codec)
	t.Cleanup(srv.Close)
	return srv.URL + codecserver.PathPrefix
}

// StaffToken issues a staff token for staffID (an active member of the
// roster), as `starter staff token` does: as the issuing role.
func (s *Stack) StaffToken(t testing.TB, staffID string) string {
	t.Helper()
	tok, err := codecserver.IssueToken(context.Background(), testenv.IssuerPool(t, s.DSN), staffID, "test", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Sealer seals decisions as staffID would after signing in at the
// stack's codec server (the test seal ring the stack verifies with).
func (s *Stack) Sealer(staffID string) support.DecisionSealer { return sealtest.As(staffID) }
