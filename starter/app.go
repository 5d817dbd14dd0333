package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cartwright-dev/cartwright/client"
	"github.com/cartwright-dev/cartwright/internal/telemetry"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// Exit codes (see the package comment).
const (
	exitOK      = 0
	exitRefused = 1
	exitCannot  = 2
)

// app is one invocation: its streams and global flags.
type app struct {
	ctx context.Context
	// telemetry is the long-running command's (withTelemetry), else nil.
	telemetry *telemetry.Telemetry
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	json      bool
	timeout   time.Duration
	uiURL     string
	// clientOpts lets tests shorten the cancel wait (AckTimeout);
	// the connection and defaults come from the environment.
	clientOpts client.Options
}

// exitError ends a command with a code; msg (if any) is its one line on
// stderr. Commands that already printed their report (audit, reconcile)
// return it with an empty msg.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// run builds the command tree, runs args and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	return a.execute(args)
}

func (a *app) execute(args []string) int {
	root := a.root()
	root.SetArgs(legacyFlags(args))
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	return a.report(cmd, err)
}

// report prints err as one line on stderr (and, with --json, as a JSON
// object on stdout) and returns its exit code.
func (a *app) report(cmd *cobra.Command, err error) int {
	name := "starter"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(a.stderr, "%s: %s\n", name, dropPrefix(oneLine(ee.msg), cmd.Name()))
		}
		return ee.code
	}
	var te *toolkit.Error
	if errors.As(err, &te) {
		fmt.Fprintf(a.stderr, "%s: %s: %s\n", name, te.Code, dropPrefix(oneLine(te.Message), cmd.Name()))
		if a.json {
			_ = writeJSON(a.stdout, map[string]any{"error": te})
		}
		return exitFor(te.Code)
	}
	// Anything else comes from cobra itself: an unknown command or flag,
	// a missing argument.
	fmt.Fprintf(a.stderr, "%s: %s (see '%s --help')\n", name, oneLine(err.Error()), name)
	return exitCannot
}

// exitEnded is the exit code of a draft order that ended without a draft:
// a tool's refusal carries its code and exits as `starter tool call` does
// for the same refusal (exitFor: INVALID_ARGUMENT 2, OUT_OF_STOCK 1); an
// end the workflow decided (rejected, expired, cancelled) is 1.
func exitEnded(r draftorder.Result) int {
	if r.Code.Valid() {
		return exitForAnswer(r.Code)
	}
	return exitRefused
}

// exitForAnswer is the exit code of a tool's refusal in its envelope (the
// tool ran and answered no): as exitFor, except that NOT_FOUND is the
// tool's answer (an unknown SKU), 1, not a workflow the command could not
// find.
func exitForAnswer(code toolkit.Code) int {
	if code == toolkit.NotFound {
		return exitRefused
	}
	return exitFor(code)
}

// exitFor: a refusal by the system is 1, anything that kept the command
// from running is 2.
func exitFor(code toolkit.Code) int {
	switch code {
	case toolkit.Conflict, toolkit.PriceChanged, toolkit.ComplianceBlocked, toolkit.OutOfStock,
		toolkit.AddressInvalid, toolkit.NeedsUserConfirmation, toolkit.Forbidden:
		return exitRefused
	}
	return exitCannot
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "starter",
		Short: "Start and drive cartwright workflows, audit them, reconcile evidence",
		Long: `starter drives cartwright's workflows on Temporal: draft orders and merchant
onboardings (through the same Go client backend services use), audits a
workflow run by replaying its history against the evidence store, and runs a
reconcile pass.

Connection: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY
(the Temporal SDK's environment configuration); CARTWRIGHT_TASK_QUEUE,
CARTWRIGHT_PG_DSN, CARTWRIGHT_EVIDENCE_KEY for the rest. For the dev stack:
'. .data/env'.

Exit codes (every command):
  0  done
  1  the system answered no: a refused signal, a draft order that ended
     without a draft, audit findings, reconcile violations
  2  could not run: usage, invalid input, unknown workflow, unreachable
     server or database, no answer in time; a draft order a tool refused
     exits with that code's number, as 'tool call' does for the same refusal`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Runtime errors are printed by report as one line; a usage dump
		// would bury it.
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print JSON for scripts instead of text")
	root.PersistentFlags().DurationVar(&a.timeout, "timeout", 30*time.Second, "give up connecting or waiting for an answer after this long")
	root.PersistentFlags().StringVar(&a.uiURL, "ui-url", "", "Temporal Web UI base URL for printed links (default CARTWRIGHT_UI_URL, else http://localhost:8233)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err.Error()} })
	root.AddCommand(a.draftOrderCmd(), a.onboardingCmd(), a.toolCmd(), a.auditCmd(), a.reconcileCmd(), a.sampleCmd(), a.migrateCmd(), a.mcpCmd(), a.staffCmd(), a.statsCmd())
	return root
}

// group is a command that only holds subcommands: without one it prints
// its help, with an unknown one it fails as a usage error (cobra would
// print the help and exit 0).
func group(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use: use, Short: short, Long: long,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q", args[0], c.CommandPath())
			}
			return c.Help()
		},
	}
	c.AddCommand(subs...)
	return c
}

// connect dials Temporal through the client package.
func (a *app) connect(ctx context.Context) (*client.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	opts, err := client.OptionsFromEnv()
	if err != nil {
		return nil, err
	}
	opts.AckTimeout = a.clientOpts.AckTimeout
	return client.New(dctx, opts)
}

// ctxFor bounds a command that may also wait up to wait.
func (a *app) ctxFor(wait time.Duration) (context.Context, context.CancelFunc) {
	if wait < 0 {
		wait = 0
	}
	return context.WithTimeout(a.ctx, a.timeout+wait)
}

// emit prints v as JSON with --json, else calls text.
func (a *app) emit(v any, text func(w io.Writer)) {
	if a.json {
		_ = writeJSON(a.stdout, v)
		return
	}
	text(a.stdout)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneLine folds a multi-line message (pgx and cobra write some) into one
// line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// dropPrefix removes the "audit: " a package puts before its messages;
// the line already starts with the command's name.
func dropPrefix(msg, name string) string {
	for strings.HasPrefix(msg, name+": ") {
		msg = strings.TrimPrefix(msg, name+": ")
	}
	return msg
}

// legacyFlags accepts the single-dash long flags of the first onboarding
// CLI (`starter onboarding start -merchant m_x`, which scripts written
// against it still use) by rewriting them to the double-dash form pflag
// expects.
func legacyFlags(args []string) []string {
	if len(args) == 0 || args[0] != "onboarding" {
		return args
	}
	out := make([]string, len(args))
	for i, arg := range args {
		out[i] = arg
		for _, name := range []string{"merchant", "refresh", "login"} {
			if arg == "-"+name || strings.HasPrefix(arg, "-"+name+"=") {
				out[i] = "-" + arg
			}
		}
	}
	return out
}
