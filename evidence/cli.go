package evidence

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Exit codes of RunReconcileCLI (seed 003 OUTBOX-INV-08).
const (
	ExitOK         = 0
	ExitViolations = 1
	ExitCannotRun  = 2
)

// RunReconcileCLI is `starter reconcile`: one reconcile pass against the
// configured database, the report as JSON on stdout. It returns 0 when no
// invariant is broken (closing stale audits is not a violation), 1 when
// violations were found, 2 when it could not run. Flags: -pending-after,
// -scan-window, -side-effect-tool (repeatable). The workflow-result check
// needs Temporal and runs in the scheduled Reconcile workflow, not here.
func RunReconcileCLI(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := ReconcileOptions{}
	fs.DurationVar(&opts.PendingAfter, "pending-after", cfg.ReconcilePendingAfter, "close pending audits older than this (at least 60s)")
	fs.DurationVar(&opts.ScanWindow, "scan-window", DefaultScanWindow, "check invariants over rows of this window (at least 1h)")
	fs.Func("side-effect-tool", "require a success audit for every snapshot of this tool (repeatable)", func(v string) error {
		opts.SideEffectTools = append(opts.SideEffectTools, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return ExitCannotRun
	}
	logger, err := toolkit.NewLogger(cfg.LogLevel, cfg.LogDevelopment)
	if err != nil {
		fmt.Fprintln(stderr, "reconcile:", err)
		return ExitCannotRun
	}
	defer func() { _ = logger.Sync() }()
	opts.Logger = logger
	if err := opts.normalise(); err != nil {
		fmt.Fprintln(stderr, "reconcile:", err)
		return ExitCannotRun
	}

	pool, err := db.Open(ctx, cfg.PostgresDSN)
	if err != nil {
		fmt.Fprintln(stderr, "reconcile:", err)
		return ExitCannotRun
	}
	defer pool.Close()
	rep, err := Reconcile(ctx, pool, opts)
	if err != nil {
		logger.Error("reconcile could not run", zap.Error(err))
		fmt.Fprintln(stderr, "reconcile:", err)
		return ExitCannotRun
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		fmt.Fprintln(stderr, "reconcile:", err)
		return ExitCannotRun
	}
	if rep.ViolationCount() > 0 {
		return ExitViolations
	}
	return ExitOK
}
