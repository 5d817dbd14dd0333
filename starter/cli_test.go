package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/testenv"

	"github.com/spf13/cobra"
)

// result is one in-process run of the CLI.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command tree in-process, as main would.
func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// oneLineErr fails unless the run exited with code and said why in exactly
// one line on stderr containing every want.
func (r result) oneLineErr(t *testing.T, what string, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, "\n"); n != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Fatalf("%s: stderr is %d lines, want one:\n%s", what, n, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("%s: stderr %q lacks %q", what, r.stderr, w)
		}
	}
	for _, noise := range []string{"Usage:", "goroutine ", "panic"} {
		if strings.Contains(r.stderr+r.stdout, noise) {
			t.Fatalf("%s: output holds %q:\n%s%s", what, noise, r.stdout, r.stderr)
		}
	}
}

// commandPaths lists every command of the tree ("draft-order start" …).
func commandPaths(c *cobra.Command, prefix []string) [][]string {
	var out [][]string
	for _, sub := range c.Commands() {
		if sub.Hidden || sub.Name() == "help" {
			continue
		}
		p := append(append([]string{}, prefix...), sub.Name())
		out = append(out, p)
		out = append(out, commandPaths(sub, p)...)
	}
	return out
}

// TestHelpOnEveryCommand: --help says what each command does, exits 0
// and needs no server.
func TestHelpOnEveryCommand(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	root := (&app{}).root()
	paths := append([][]string{nil}, commandPaths(root, nil)...)
	if len(paths) < 15 {
		t.Fatalf("only %d commands: %v", len(paths), paths)
	}
	for _, p := range paths {
		cmd, _, err := root.Find(p)
		if err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, "", append(p, "--help")...)
		says := strings.SplitN(cmd.Long, "\n", 2)[0] // cobra shows Long, else Short
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, says) || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%v --help: exit %d, stderr %q, stdout:\n%s", p, r.code, r.stderr, r.stdout)
		}
		if cmd.Long == "" {
			t.Errorf("%v has no long help", p)
		}
	}
}

// TestUsageErrors: wrong flags, commands and arguments are one line and
// exit 2, without a usage dump.
func TestUsageErrors(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"draft-order", "status", "--bogus", "x"}, "unknown flag: --bogus"},
		{[]string{"draft-order", "status"}, "expects WORKFLOW_ID"},
		{[]string{"draft-order", "bogus"}, `unknown command "bogus"`},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"draft-order", "start"}, `"file" not set`},
		{[]string{"draft-order", "start", "-f", "x.json", "--key", "k-12345678", "--new-key"}, "exclude each other"},
		{[]string{"draft-order", "confirm", "draft-order/u_1/k-12345678"}, `"quote-hash" not set`},
		{[]string{"draft-order", "reject", "draft-order/u_1/k-12345678"}, `"reason" not set`},
		{[]string{"draft-order", "approve", "draft-order/u_1/k-12345678", "--approver", "carol.admin"}, "--approver is gone"},
		{[]string{"onboarding", "status"}, "--merchant is required"},
		{[]string{"audit"}, "give a WORKFLOW_ID"},
		{[]string{"audit", "--all"}, "--all needs --query"},
		{[]string{"audit", "--direct-since", "1h", "--all"}, "--direct-since takes no"},
		{[]string{"reconcile", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"draft-order", "status", "x", "--timeout", "soon"}, "invalid argument"},
	} {
		runCLI(t, "", tc.args...).oneLineErr(t, strings.Join(tc.args, " "), exitCannot, tc.want)
	}
}

// TestBadOrderFiles: INVALID_ARGUMENT naming the field, before any
// server is contacted (the address here is closed).
func TestBadOrderFiles(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	good := `"request":{"user_id":"u_1","currency":"EUR"},"items":[{"sku":"TEE-ORG-M-WHT","quantity":2}]`
	addr := `"ship_to":{"name":"A B","line1":"Invalidenstrasse 116","city":"Berlin","postal_code":"10115","country":"DE"}`
	for _, tc := range []struct{ doc, want string }{
		{`{"request":{"user_id":"u_1"},"items":[{"sku":"X","quantity":"2"}]}`, "field items.quantity must be int"},
		{`{` + good + `,"colour":"red"}`, `unknown field "colour"`},
		{`{` + good + `,"items":[]}`, `Duplicate key: "items"`},
		{`{` + good + `,` + addr + `,"confirm_window":"30m"}`, "field confirm_window"},
		{`{` + good + `}`, "ship_to.country is required"},
		{`{` + good + `,"ship_to":{"line1":"x","city":"Berlin","country":"DE"}}`, "ship_to.name is required"},
		{`{` + good + `,` + addr + `,"incoterm":"FOB"}`, `incoterm "FOB" is invalid, one of DDP, DAP`},
		{`{"request":{"user_id":"jane@example.com","currency":"EUR"},"items":[{"sku":"X","quantity":1}],` + addr + `}`, "user_id must be an opaque account id"},
		{`{"request":{"user_id":"u_1","currency":"EUR","client":{"app":"mobile"}},"items":[{"sku":"X","quantity":1}],` + addr + `}`, "request.client.app must be one of"},
		{`not json`, "one JSON object"},
	} {
		r := runCLI(t, tc.doc, "draft-order", "start", "-f", "-", "--new-key")
		r.oneLineErr(t, tc.doc, exitCannot, "INVALID_ARGUMENT", tc.want)
	}
	runCLI(t, "", "draft-order", "start", "-f", filepath.Join(t.TempDir(), "missing.json"), "--new-key").
		oneLineErr(t, "missing file", exitCannot, "INVALID_ARGUMENT", "no such file")
	runCLI(t, `{`+good+`,`+addr+`}`, "draft-order", "start", "-f", "-").
		oneLineErr(t, "no key", exitCannot, "INVALID_ARGUMENT", "idempotency_key is required")
}

// TestUnreachableServer: one clear line naming the address, exit 2.
func TestUnreachableServer(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	t.Setenv("CARTWRIGHT_PAYLOAD_KEYS", codectest.Spec())
	for _, args := range [][]string{
		{"draft-order", "status", "draft-order/u_1/k-12345678"},
		{"draft-order", "confirm", "draft-order/u_1/k-12345678", "--quote-hash", "sha256:x"},
		{"onboarding", "start", "--merchant", "m_nobody"},
		{"sample"},
	} {
		runCLI(t, "", args...).oneLineErr(t, strings.Join(args, " "), exitCannot,
			"UPSTREAM_ERROR", "cannot reach Temporal at 127.0.0.1:1", "connection refused")
	}
}

// TestBinaryExitCodes builds the real binary: os.Exit carries the codes
// and the streams are the process's.
func TestBinaryExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "starter")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--help"}, 0},
		{[]string{"draft-order", "--bogus"}, 2},
		{[]string{"draft-order", "status", "draft-order/u_1/k-12345678"}, 2},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS=127.0.0.1:1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || (code != 0 && strings.Count(stderr.String(), "\n") != 1) {
			t.Fatalf("%v: exit %d (want %d), stderr:\n%s", tc.args, code, tc.code, stderr.String())
		}
	}
}

// TestLegacyOnboardingFlags: the single-dash form the first onboarding CLI took.
func TestLegacyOnboardingFlags(t *testing.T) {
	got := legacyFlags([]string{"onboarding", "returned", "-merchant", "m_x", "-refresh", "-merchant=m_y", "-f"})
	want := []string{"onboarding", "returned", "--merchant", "m_x", "--refresh", "--merchant=m_y", "-f"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%v", got)
	}
	if got := legacyFlags([]string{"draft-order", "-merchant"}); got[1] != "-merchant" {
		t.Fatalf("rewrote outside onboarding: %v", got)
	}
}
