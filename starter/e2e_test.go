package main

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/draftorder/drafttest"
)

// stack starts the real stack with a worker and points the CLI at it.
func stack(t *testing.T) *wiringtest.Stack {
	t.Helper()
	s := wiringtest.Start(t)
	s.Env(t)
	return s
}

// jsonOut runs the CLI with --json and decodes stdout into v.
func jsonOut(t *testing.T, v any, args ...string) result {
	t.Helper()
	r := runCLI(t, "", append([]string{"--json"}, args...)...)
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("%v: exit %d, stdout is not JSON (%v):\n%s\nstderr: %s", args, r.code, err, r.stdout, r.stderr)
	}
	return r
}

// TestDraftOrderThroughTheCLI: a full draft order driven only by the CLI,
// from an order file to a confirmed, audited draft order.
func TestDraftOrderThroughTheCLI(t *testing.T) {
	stack(t)
	file := filepath.Join(t.TempDir(), "order.json")
	order := `{"request": {"user_id": "u_cli", "currency": "EUR", "client": {"app": "cli"}},
 "items": [{"sku": "TEE-ORG-M-WHT", "quantity": 2}],
 "ship_to": {"name": "Erika Mustermann", "line1": "Invalidenstrasse 116", "city": "Berlin", "postal_code": "10115", "country": "DE"}}`
	if err := os.WriteFile(file, []byte(order), 0o600); err != nil {
		t.Fatal(err)
	}
	key := freshKey("cli")
	var started startResult
	if r := jsonOut(t, &started, "draft-order", "start", "-f", file, "--key", key); r.code != 0 {
		t.Fatalf("start: exit %d: %s", r.code, r.stderr)
	}
	id := "draft-order/u_cli/" + key
	if started.WorkflowID != id || started.Attached || started.Status == nil || started.Status.Confirmation == nil {
		t.Fatalf("start: %+v", started)
	}
	hash := started.Status.Confirmation.QuoteHash
	if !strings.HasSuffix(started.ConfirmCommand, " draft-order confirm "+id+" --quote-hash "+hash) {
		t.Fatalf("confirm command: %q", started.ConfirmCommand)
	}

	// The same file again attaches (text output says so).
	r := runCLI(t, "", "draft-order", "start", "-f", file, "--key", key)
	if r.code != 0 || !strings.Contains(r.stdout, "attached to the existing run") || !strings.Contains(r.stdout, hash) {
		t.Fatalf("second start: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "draft-order", "status", id)
	if r.code != 0 || !strings.Contains(r.stdout, draftorder.StateNeedsConfirm) || !strings.Contains(r.stdout, "quote_hash   "+hash) {
		t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	runCLI(t, "", "draft-order", "status", "draft-order/u_cli/never-started-1").
		oneLineErr(t, "missing workflow", exitCannot, "NOT_FOUND", "draft-order/u_cli/never-started-1 not found")
	runCLI(t, "", "draft-order", "confirm", id, "--quote-hash", "sha256:00").
		oneLineErr(t, "stale hash", exitRefused, "CONFLICT", "stale_quote_hash")

	// The printed command, as printed.
	args := strings.Fields(started.ConfirmCommand)[1:]
	r = runCLI(t, "", args...)
	if r.code != 0 || !strings.Contains(r.stdout, draftorder.StateDraftCreated) || !strings.Contains(r.stdout, "created by this call") {
		t.Fatalf("confirm: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Again: the same draft order, and --json says this call found it
	// created rather than created it.
	var res confirmOutput
	if r := jsonOut(t, &res, args...); r.code != 0 || res.State != draftorder.StateDraftCreated || res.DraftOrder.QuoteHash != hash ||
		!res.AlreadyDone || res.CreatedByThisCall {
		t.Fatalf("confirm again (idempotent): exit %d %+v", r.code, res)
	}
	runCLI(t, "", "draft-order", "cancel", id).oneLineErr(t, "cancel after creation", exitRefused, "CONFLICT", "already ended")

	var rep audit.Report
	// Five calls: the origin choice, pricing, compliance, the total and the write.
	if r := jsonOut(t, &rep, "audit", id); r.code != 0 || !rep.Clean || len(rep.Activities) != 5 {
		t.Fatalf("audit: exit %d, %+v\n%s", r.code, rep, r.stderr)
	}
	runCLI(t, "", "audit", "draft-order/u_cli/never-started-1").oneLineErr(t, "audit of a missing workflow", exitCannot, "NOT_FOUND")
	var drep evidence.DirectReport
	if r := jsonOut(t, &drep, "audit", "--direct-since", "1h"); r.code != 0 || !drep.Clean {
		t.Fatalf("audit --direct-since: exit %d, %+v\n%s", r.code, drep, r.stderr)
	}
}

// TestApprovalThroughTheCLI: support staff's commands, a refused approver
// included.
func TestApprovalThroughTheCLI(t *testing.T) {
	s := stack(t)
	// Perfume by air needs review (by road it is allowed: compliance
	// follows the chosen option's mode).
	order := `{"request": {"user_id": "u_cli", "currency": "EUR"}, "items": [{"sku": "PRF-ROSE-EDP100", "quantity": 1}],
 "ship_to": {"name": "Jean Dupont", "line1": "12 Rue de Rivoli", "city": "Paris", "postal_code": "75001", "country": "FR"},
 "shipping_service": "express"}`
	r := runCLI(t, order, "draft-order", "start", "-f", "-", "--key", freshKey("cli-apr"))
	if r.code != 0 || !strings.Contains(r.stdout, draftorder.StateAwaitingApproval) || !strings.Contains(r.stdout, "draft-order approve") {
		t.Fatalf("start: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	id := strings.Fields(r.stdout[strings.Index(r.stdout, "workflow id"):])[2]
	// Staff decide as the owner of their token, sealed by the codec server.
	t.Setenv("CARTWRIGHT_CODEC_URL", s.ServeCodec(t))
	runCLI(t, "", "draft-order", "approve", id).
		oneLineErr(t, "no token", exitCannot, "UNAUTHORIZED", "CARTWRIGHT_STAFF_TOKEN")
	t.Setenv("CARTWRIGHT_STAFF_TOKEN", "cwst_not-a-token")
	runCLI(t, "", "draft-order", "approve", id).
		oneLineErr(t, "wrong token", exitCannot, "UNAUTHORIZED", "/codec/login")
	t.Setenv("CARTWRIGHT_STAFF_TOKEN", s.StaffToken(t, "alice.support"))
	runCLI(t, "", "draft-order", "approve", id).
		oneLineErr(t, "role not allowed", exitRefused, "FORBIDDEN", "approver_not_allowed")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(s.StaffToken(t, "bob.compliance")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "draft-order", "approve", id, "--token-file", tokenFile, "--reason", "DG service booked")
	if r.code != 0 || !strings.Contains(r.stdout, "approved") || !strings.Contains(r.stdout, "approve by bob.compliance") ||
		!strings.Contains(r.stdout, "sealed seal_") || !strings.Contains(r.stdout, "draft-order confirm") {
		t.Fatalf("approve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "draft-order", "cancel", id, "--reason", "changed my mind")
	if r.code != 0 || !strings.Contains(r.stdout, draftorder.StateCancelled) {
		t.Fatalf("cancel: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestSample is `make dev`'s main job: it prints the total, a Web UI link
// to the run and two commands; the Temporal CLI one, run as printed,
// confirms the draft order.
func TestSample(t *testing.T) {
	s := stack(t)
	// Links point at the stack's own UI (issue: they always said :8233).
	t.Setenv("CARTWRIGHT_UI_URL", "http://localhost:8299")
	var out startResult
	if r := jsonOut(t, &out, "sample"); r.code != 0 {
		t.Fatalf("sample: exit %d: %s", r.code, r.stderr)
	}
	if !strings.HasPrefix(out.WorkflowID, "draft-order/u_sample/sample-") || out.Status == nil || out.Status.Confirmation == nil {
		t.Fatalf("sample: %+v", out)
	}
	wantLink := "http://localhost:8299/namespaces/default/workflows/" + url.PathEscape(out.WorkflowID) + "/" + out.RunID + "/history"
	if out.UILink != wantLink || !strings.Contains(out.UILink, "draft-order%2Fu_sample%2Fsample-") {
		t.Fatalf("link %s, want %s", out.UILink, wantLink)
	}
	hash := out.Status.Confirmation.QuoteHash
	wantRaw := "workflow signal --address " + testenv.TemporalAddress() + " --workflow-id " + out.WorkflowID +
		` --name confirm --input '{"quote_hash":"` + hash + `"}'`
	if !strings.HasSuffix(out.TemporalCommand, wantRaw) {
		t.Fatalf("temporal command %q, want …%q", out.TemporalCommand, wantRaw)
	}
	// The text form carries the same.
	r := runCLI(t, "", "draft-order", "status", out.WorkflowID)
	if !strings.Contains(r.stdout, "total        ") {
		t.Fatalf("status: %s", r.stdout)
	}

	bin := os.Getenv("CARTWRIGHT_TEMPORAL_BIN")
	if bin == "" {
		bin = "../.bin/temporal"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no Temporal CLI (%s) to run the printed command with", bin)
	}
	line := bin + " " + strings.SplitN(out.TemporalCommand, " ", 2)[1]
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()
	if b, err := exec.CommandContext(ctx, "sh", "-c", line).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	if res, err := drafttest.Result(ctx, s.Temporal, out.WorkflowID); err != nil || res.State != draftorder.StateDraftCreated {
		t.Fatalf("after the printed temporal command: %+v, %v", res, err)
	}
}
