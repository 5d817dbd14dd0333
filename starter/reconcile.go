package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
)

func (a *app) reconcileCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "reconcile [--pending-after D] [--scan-window D] [--side-effect-tool NAME]...",
		Short: "Run one reconcile pass: close stale pending audits, check audit/evidence invariants",
		Long: `Run one reconcile pass against the evidence database (what the cartwright-reconcile
schedule runs every 15 minutes): pending audit rows older than --pending-after
are closed as failed, and the audit <-> evidence invariants are checked over
--scan-window. Checking workflow results against evidence needs Temporal and is
done by the scheduled workflow, not here.

Flags:
  --pending-after D       close pending audits older than D (default
                          CARTWRIGHT_RECONCILE_PENDING_AFTER, 2h; at least 60s)
  --scan-window D         check invariants over rows of this window (at least 1h)
  --side-effect-tool NAME require a success audit for every snapshot of this
                          tool (repeatable)

Needs CARTWRIGHT_PG_DSN. Exit: 0 no invariant broken (closing stale audits is
not a violation), 1 violations, 2 could not run.`,
		// The flags belong to evidence.RunReconcileCLI (Go flag syntax,
		// -x and --x alike); cobra passes them through untouched.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				switch arg {
				case "-h", "-help", "--help":
					return cmd.Help()
				case "--json":
					a.json = true
				}
			}
			args = without(args, "--json")
			cfg, err := config.Load()
			if err != nil {
				return toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
			}
			if cfg.LogLevel == "info" {
				// The pass logs its report at info level for the
				// schedule's log; here the report is the output.
				cfg.LogLevel = "warn"
			}
			var out bytes.Buffer
			var errBuf lineBuffer
			code := evidence.RunReconcileCLI(a.ctx, cfg, args, &out, &errBuf)
			if code == evidence.ExitCannotRun {
				return &exitError{code: code, msg: errBuf.first()}
			}
			if a.json {
				_, _ = a.stdout.Write(out.Bytes())
				return exitWith(code)
			}
			var rep evidence.ReconcileReport
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				_, _ = a.stdout.Write(out.Bytes())
				return exitWith(code)
			}
			printReconcile(a.stdout, rep)
			return exitWith(code)
		},
	}
	return c
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
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  VIOLATION %s: audit %d snapshot %s %s %s %s\n", v.Invariant, v.AuditID, v.SnapshotID, v.Tool, v.CorrelationID, v.WorkflowID)
	}
}

func without(args []string, drop string) []string {
	out := args[:0:0]
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}
