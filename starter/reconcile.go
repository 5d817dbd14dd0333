package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/logging"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func (a *app) reconcileCmd() *cobra.Command {
	var opts evidence.ReconcileOptions
	var pendingAfter time.Duration
	c := &cobra.Command{
		Use:   "reconcile [--pending-after D] [--scan-window D] [--side-effect-tool NAME]...",
		Short: "Run one reconcile pass: close stale pending audits, check audit/evidence invariants",
		Long: `Run one reconcile pass against the evidence database (what the cartwright-reconcile
schedule runs every 15 minutes): pending audit rows older than --pending-after
are closed as failed, and the audit <-> evidence invariants are checked over
--scan-window. Checking workflow results against evidence needs Temporal and is
done by the scheduled workflow, not here.

Every evidence row and draft row is checked against its writer's signature
with the public keys of CARTWRIGHT_WORKER_ROW_PUBLIC_KEYS and
CARTWRIGHT_GATEWAY_ROW_PUBLIC_KEYS (docs/evidence.md#row-signatures).

Needs CARTWRIGHT_PG_DSN and the public keys. Exit: 0 no invariant broken (closing stale audits is
not a violation), 1 violations, 2 could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load()
			if err != nil {
				return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
			}
			opts.PendingAfter = cfg.ReconcilePendingAfter
			if opts.RowKeys, err = evidence.RowKeysFromConfig(cfg); err != nil {
				return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
			}
			if cmd.Flags().Changed("pending-after") {
				opts.PendingAfter = pendingAfter
			}
			if err := opts.Check(); err != nil {
				return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
			}
			rep, err := a.reconcile(cfg, opts)
			if err != nil {
				return err
			}
			a.emit(rep, func(w io.Writer) { printReconcile(w, rep) })
			if rep.ViolationCount() > 0 {
				return &exitError{code: exitRefused}
			}
			return nil
		},
	}
	c.Flags().DurationVar(&pendingAfter, "pending-after", 0, "close pending audits older than this (default CARTWRIGHT_RECONCILE_PENDING_AFTER, 2h; at least 60s)")
	c.Flags().DurationVar(&opts.ScanWindow, "scan-window", evidence.DefaultScanWindow, "check invariants over rows of this window (at least 1h)")
	c.Flags().StringArrayVar(&opts.SideEffectTools, "side-effect-tool", nil, "require a success audit for every snapshot of this tool (repeatable)")
	return c
}

// reconcile runs one pass on the configured database. The pass logs its
// report at info level for the schedule's log; here the report is the
// output, so only warnings are logged.
func (a *app) reconcile(cfg config.Config, opts evidence.ReconcileOptions) (evidence.ReconcileReport, error) {
	if cfg.LogLevel == "info" {
		cfg.LogLevel = "warn"
	}
	logger, err := logging.NewLogger(cfg.LogLevel, cfg.LogDevelopment)
	if err != nil {
		return evidence.ReconcileReport{}, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	defer func() { _ = logger.Sync() }()
	opts.Logger = logger
	ctx, cancel := a.ctxFor(0)
	defer cancel()
	pool, err := db.Open(ctx, cfg.PostgresDSN)
	if err != nil {
		return evidence.ReconcileReport{}, toolkit.Errorf(toolkit.UpstreamError, "%v", err)
	}
	defer pool.Close()
	rep, err := evidence.Reconcile(ctx, pool, opts)
	if err != nil {
		return rep, toolkit.Errorf(toolkit.UpstreamError, "reconcile could not run: %v", err)
	}
	return rep, nil
}

func printReconcile(w io.Writer, r evidence.ReconcileReport) {
	verdict := "no invariant broken"
	if n := r.ViolationCount(); n > 0 {
		verdict = fmt.Sprintf("%d VIOLATION(S)", n)
	}
	fmt.Fprintf(w, "reconcile: %s (%d ms)\n", verdict, r.DurationMS)
	fmt.Fprintf(w, "  pending audits closed as failed  %d (older than %ds); still pending %d\n",
		r.MarkedFailed, r.PendingAfterSeconds, r.StillPending)
	fmt.Fprintf(w, "  success audit without snapshot   %d\n", r.SuccessWithoutSnapshot)
	fmt.Fprintf(w, "  snapshot with failed audit       %d\n", r.SnapshotWithFailedAudit)
	fmt.Fprintf(w, "  snapshot without success audit   %d\n", r.SnapshotWithoutAudit)
	fmt.Fprintf(w, "  draft row unlike its evidence    %d\n", r.DraftRowsMismatched)
	fmt.Fprintf(w, "  draft row its chain not backing %d\n", r.DraftRowsUnbacked)
	fmt.Fprintf(w, "  stock units never returned       %d\n", r.StockNeverReturned)
	fmt.Fprintf(w, "  stock units taken twice          %d\n", r.StockTakenTwice)
	fmt.Fprintf(w, "  stock units returned twice       %d\n", r.StockReturnedTwice)
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  VIOLATION %s: audit %d snapshot %s %s %s %s %s %s\n", v.Invariant, v.AuditID, v.SnapshotID, v.Tool, v.CorrelationID, v.WorkflowID, v.DraftOrderID, v.Detail)
	}
}
