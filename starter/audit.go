package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/internal/config"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring"
)

func (a *app) auditCmd() *cobra.Command {
	var (
		runID, history, query string
		all                   bool
		directSince           time.Duration
	)
	c := &cobra.Command{
		Use:   "audit [WORKFLOW_ID] [--run RUN_ID] | --history FILE | --all --query QUERY | --direct-since DURATION",
		Short: "Replay a workflow run and check every tool result against the evidence store",
		Long: `Audit a workflow run: replay its history with the registered workflow code (a
non-deterministic change is reported), then check every completed tool activity
against its evidence snapshot (present, same workflow, run, activity and tool,
same canonical hash) and the workflow's hash chain. A missing, edited or extra
snapshot is named with its activity id.

  starter audit draft-order/u_123/order-2f9c1e77          the current (or last) run
  starter audit ID --run RUN_ID                           one run
  starter audit --history h.json                          a history exported with
      temporal workflow show --workflow-id ID --output json > h.json
  starter audit --all --query 'WorkflowType = "DraftOrder" AND ExecutionStatus = "Completed"'
  starter audit --direct-since 24h                        the read-only calls the MCP
      gateway answered without a workflow (docs/audit.md#direct-calls)

A run the server no longer has (deleted after retention) is audited from the
history archive. Needs CARTWRIGHT_PG_DSN and CARTWRIGHT_EVIDENCE_KEY, and Temporal
except with --history.

Exit: 0 clean, 1 findings, 2 could not run (with --all: any run that could not
be audited).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var id string
			if len(args) == 1 {
				id = args[0]
			}
			if directSince > 0 {
				if all || id != "" || history != "" {
					return usagef("--direct-since takes no WORKFLOW_ID, --history or --all")
				}
				return a.auditDirect(directSince)
			}
			switch {
			case all && (id != "" || history != ""):
				return usagef("--all takes no WORKFLOW_ID or --history")
			case all && query == "":
				return usagef("--all needs --query (a visibility query, e.g. 'WorkflowType = \"DraftOrder\"')")
			case !all && query != "":
				return usagef("--query goes with --all")
			case !all && history == "" && id == "":
				return usagef("give a WORKFLOW_ID, --history FILE or --all --query QUERY")
			case id != "" && history != "":
				return usagef("give either a WORKFLOW_ID or --history, not both")
			}
			ctx, cancel := a.ctxFor(0)
			defer cancel()
			deps, closeDeps, err := a.auditDeps(ctx, history == "")
			if err != nil {
				return err
			}
			defer closeDeps()
			if all {
				// A query may list many runs; do not cut it at --timeout.
				m, err := audit.AuditMany(a.ctx, deps, query)
				if err != nil {
					return &exitError{code: audit.ExitCannotRun, msg: err.Error()}
				}
				a.emit(m, func(w io.Writer) { printMany(w, m) })
				return exitWith(m.ExitCode())
			}
			t := audit.ByID(id, runID)
			if history != "" {
				h, err := audit.ReadHistoryFile(history)
				if err != nil {
					return &exitError{code: audit.ExitCannotRun, msg: err.Error()}
				}
				t = audit.FromHistory(h)
			}
			rep, err := audit.Audit(ctx, deps, t)
			if err != nil {
				if errors.Is(err, audit.ErrNotFound) {
					return toolkit.Errorf(toolkit.NotFound, "%v", err)
				}
				return &exitError{code: audit.ExitCannotRun, msg: err.Error()}
			}
			a.emit(rep, func(w io.Writer) { _ = rep.WriteText(w) })
			return exitWith(audit.ExitCode(rep, nil))
		},
	}
	c.Flags().StringVar(&runID, "run", "", "run id (default: the current or last run)")
	c.Flags().StringVar(&history, "history", "", "audit a history JSON file instead of fetching it")
	c.Flags().BoolVar(&all, "all", false, "audit every run --query lists")
	c.Flags().StringVar(&query, "query", "", "visibility query for --all (the Web UI's query language)")
	c.Flags().DurationVar(&directSince, "direct-since", 0, "audit the direct calls (read-only calls answered without a workflow) of this long ago until now")
	return c
}

// auditDirect audits the direct calls of the last since
// (docs/audit.md#direct-calls): no history, no Temporal.
func (a *app) auditDirect(since time.Duration) error {
	ctx, cancel := a.ctxFor(0)
	defer cancel()
	deps, closeDeps, err := a.auditDeps(ctx, false)
	if err != nil {
		return err
	}
	defer closeDeps()
	rep, err := deps.Evidence.AuditDirect(a.ctx, time.Now().Add(-since))
	if err != nil {
		return &exitError{code: audit.ExitCannotRun, msg: err.Error()}
	}
	a.emit(rep, func(w io.Writer) {
		for _, f := range rep.Findings {
			fmt.Fprintf(w, "FINDING %s: %s %s: %s\n", f.Kind, f.ChainKey, f.SnapshotID, f.Detail)
		}
		verdict := "CLEAN"
		if !rep.Clean {
			verdict = fmt.Sprintf("%d findings", len(rep.Findings))
		}
		fmt.Fprintf(w, "direct calls since %s: %d calls, %d snapshots in %d chains: %s\n",
			rep.Since.UTC().Format(time.RFC3339), rep.Calls, rep.Snapshots, rep.Chains, verdict)
	})
	if !rep.Clean {
		return exitWith(audit.ExitFindings)
	}
	return nil
}

// auditDeps opens the evidence store, the history archive and (when
// needed) Temporal.
func (a *app) auditDeps(ctx context.Context, needTemporal bool) (audit.Deps, func(), error) {
	cfg, err := config.Load()
	if err != nil {
		return audit.Deps{}, nil, toolkit.Errorf(toolkit.InvalidArgument, "%v", err)
	}
	deps, closeStores, err := audit.OpenStores(ctx, cfg, zap.NewNop())
	if err != nil {
		return audit.Deps{}, nil, err
	}
	closers := []func(){closeStores}
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	// The replayer decodes with the workers' payload codec: a history
	// exported without one (`temporal workflow show --output json`) holds
	// only encrypted payloads.
	pc, err := codec.FromConfig(cfg)
	if err != nil {
		closeAll()
		return audit.Deps{}, nil, toolkit.Errorf(toolkit.InvalidArgument, "payload codec: %v", err)
	}
	deps.Reader, deps.DataConverter, deps.Specs = "starter-audit", pc.DataConverter(), wiring.ToolSpecs()
	if needTemporal {
		c, err := a.connect(ctx)
		if err != nil {
			closeAll()
			return audit.Deps{}, nil, err
		}
		closers = append(closers, c.Close)
		deps.Temporal = c.Temporal()
	}
	return deps, closeAll, nil
}

func printMany(w io.Writer, m audit.ManyReport) {
	for i := range m.Reports {
		_ = m.Reports[i].WriteText(w)
	}
	for _, e := range m.Errors {
		fmt.Fprintf(w, "audit %s run %s: COULD NOT RUN: %s\n", e.WorkflowID, e.RunID, e.Error)
	}
	fmt.Fprintf(w, "%d run(s) audited for %s: %d clean, %d with findings, %d could not be audited\n",
		m.Audited, m.Query, m.Clean, m.WithFindings, m.Failed)
}

// exitWith turns a non-zero code into an exitError with no message: the
// report already said why.
func exitWith(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code}
}
