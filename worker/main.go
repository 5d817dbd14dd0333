// Command worker serves every cartwright workflow and activity on one task
// queue. It migrates the database, registers the tools in one registry
// (so every activity goes through the same invoker), creates the reconcile
// schedule, and runs until interrupted.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/tclient"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// Deps are the clients every area's registration needs, created once.
type Deps struct {
	Config   config.Config
	Logger   *zap.Logger
	Pool     *pgxpool.Pool
	Temporal client.Client
	Registry *toolkit.Registry
	Invoker  *toolkit.Invoker
	Evidence *evidence.Store
}

// registrations run in order; each registers its area's tools into the
// shared registry and its workflows and activities on the worker.
var registrations = []struct {
	area string
	fn   func(worker.Worker, *Deps) error
}{
	{"evidence", registerEvidence},
	{"commerce", registerCommerce},
	{"draft-order", registerDraftOrder},
	{"onboarding", registerOnboarding},
	{"archive", registerArchive},
	{"tools", registerTools},
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	logger, err := toolkit.NewLogger(cfg.LogLevel, cfg.LogDevelopment)
	if err != nil {
		return err
	}
	defer func() { _ = logger.Sync() }()
	logger = logger.With(zap.String("task_queue", cfg.TaskQueue), zap.String("build", toolkit.BuildHash()))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	deps, cleanup, err := connect(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer cleanup()

	w := worker.New(deps.Temporal, cfg.TaskQueue, worker.Options{})
	for _, r := range registrations {
		if err := r.fn(w, deps); err != nil {
			return fmt.Errorf("register %s: %w", r.area, err)
		}
	}
	registerWorkflows(w, deps.Registry)
	if err := ensureReconcileSchedule(ctx, deps.Temporal, cfg); err != nil {
		return err
	}
	if err := ensureArchiveSchedule(ctx, deps.Temporal, cfg); err != nil {
		return err
	}
	logger.Info("worker starting", zap.Int("tools", len(deps.Registry.Specs())))
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	<-ctx.Done()
	logger.Info("worker stopping")
	w.Stop()
	return nil
}

// connect migrates and opens the database, dials Temporal and builds the
// evidence store, the registry and the invoker.
func connect(ctx context.Context, cfg config.Config, logger *zap.Logger) (*Deps, func(), error) {
	migrateCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := db.Migrate(migrateCtx, cfg.PostgresDSN); err != nil {
		return nil, nil, err
	}
	pool, err := db.Open(ctx, cfg.PostgresDSN, db.MaxConns(cfg.PostgresMaxConns))
	if err != nil {
		return nil, nil, err
	}
	tc, err := tclient.Dial(ctx, logger)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	store, err := evidence.NewStoreFromConfig(pool, cfg, logger)
	if err != nil {
		tc.Close()
		pool.Close()
		return nil, nil, err
	}
	reg := toolkit.NewRegistry(schemas.FS)
	deps := &Deps{
		Config: cfg, Logger: logger, Pool: pool, Temporal: tc,
		Registry: reg, Invoker: toolkit.NewInvoker(reg, store, logger), Evidence: store,
	}
	return deps, func() { tc.Close(); pool.Close() }, nil
}

// registerWorkflows puts every workflow on w under its registered name, from
// the one list the auditor's replayer uses too, so the two can never
// disagree. It runs after the tools are registered: the workflows' activity
// options come from the specs in reg.
func registerWorkflows(w worker.Worker, reg *toolkit.Registry) {
	workflows.Register(w)
	workflows.UseToolSpecs(reg.Specs()...)
}
