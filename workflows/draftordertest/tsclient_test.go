package draftordertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/worker/wiring/wiringtest"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// tsClientDir is the Node project of Temporal's TypeScript SDK.
var tsClientDir = filepath.Join("..", "..", "scripts", "temporal-ts")

// tsStart is what the TypeScript client read of one Update-with-Start.
type tsStart struct {
	OK      bool              `json:"ok"`
	Status  draftorder.Status `json:"status"`
	RunID   string            `json:"runId"`
	Refusal *tsRefusal        `json:"refusal"`
}

// tsRefusal is a refused update as the TypeScript client read it: the
// ApplicationFailure's type and its first detail, cartwright's error object.
type tsRefusal struct {
	Kind    string         `json:"kind"`
	Code    string         `json:"code"`
	Name    string         `json:"name"`
	Message string         `json:"message"`
	Error   *toolkit.Error `json:"error"`
}

// TestTypeScriptBackendKeepsTheContract (docs/backend.md#other-languages):
// Temporal's official TypeScript SDK, no cartwright code, drives draft
// orders the way a TypeScript backend would — Update-with-Start of
// DraftOrder with next_action carrying the order — and gets the contract
// from the workflow itself: a bad input is INVALID_ARGUMENT naming the
// field (not "unknown update"), its run ends canceled (never failed) and
// the key stays free for the corrected order; the same key with another
// basket is CONFLICT naming the key while a repeat gets the same total; a
// confirm creates the draft, and a confirm after the run ended finds the
// run closed and reads "already done" from its result. The Node packages
// come from scripts/temporal-ts.sh setup (make test runs it); without
// them this test fails, it does not skip.
func TestTypeScriptBackendKeepsTheContract(t *testing.T) {
	testenv.Integration(t)
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@temporalio", "client")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed (%v): run scripts/temporal-ts.sh setup", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run scripts/temporal-ts.sh setup")
	}
	st := wiringtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(3*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs")
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+testenv.TemporalAddress(), "TASK_QUEUE="+st.TaskQueue,
		"USER_ID=u_ts_backend", "CARTWRIGHT_PAYLOAD_KEYS="+codectest.Spec(), "CARTWRIGHT_PAYLOAD_KEY_ID="+codectest.KeyID)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var out struct {
		Bad, Corrected, First, Other, Repeat, Currency tsStart
		BadRun, CurrencyRun                            struct{ Status, RunID string }
		Confirm, LateConfirm                           struct {
			OK      bool                     `json:"ok"`
			Answer  draftorder.ConfirmAnswer `json:"answer"`
			Refusal *tsRefusal               `json:"refusal"`
		}
		CancelOrder struct {
			OK      bool                    `json:"ok"`
			Answer  draftorder.SettleStatus `json:"answer"`
			Refusal *tsRefusal              `json:"refusal"`
		}
		LateConfirmRead struct {
			State       string `json:"state"`
			AlreadyDone bool   `json:"alreadyDone"`
		}
		Hash        string `json:"hash"`
		CorrectedID string `json:"correctedId"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s (stderr %s)", err, stdout.String(), stderr.String())
	}
	t.Logf("TypeScript client read: %s", stdout.String())
	if out.CorrectedID != "" {
		st.TerminateLater(t, out.CorrectedID) // it waits for a confirmation nobody sends
	}

	// 1. A bad input.
	if r := out.Bad.Refusal; out.Bad.OK || r == nil || r.Code != string(toolkit.InvalidArgument) || r.Error == nil ||
		!slices.Contains(fieldsOf(r.Error), "items.0.quantity") {
		t.Fatalf("bad input: %+v (refusal %+v)", out.Bad, out.Bad.Refusal)
	}
	if out.BadRun.Status != "CANCELLED" {
		t.Fatalf("the refused run is %s, want CANCELLED (never FAILED)", out.BadRun.Status)
	}
	if !out.Corrected.OK || out.Corrected.Status.Confirmation == nil {
		t.Fatalf("the corrected order under the freed key: %+v", out.Corrected)
	}

	// 1b. A currency the rates in use lack: the run's first step.
	if r := out.Currency.Refusal; out.Currency.OK || r == nil || r.Code != string(toolkit.InvalidArgument) || r.Error == nil ||
		!slices.Equal(fieldsOf(r.Error), []string{"currency"}) || !strings.Contains(fmt.Sprint(r.Error.Details["supported"]), "EUR") ||
		strings.Contains(fmt.Sprint(r.Error.Details["supported"]), "THB") {
		t.Fatalf("THB with rates that lack it: %+v (refusal %+v)", out.Currency, out.Currency.Refusal)
	}
	if out.CurrencyRun.Status != "CANCELLED" {
		t.Fatalf("the run refused for its currency is %s, want CANCELLED (never FAILED)", out.CurrencyRun.Status)
	}

	// 2. One key, two baskets.
	if !out.First.OK || out.First.Status.Confirmation == nil || out.Hash == "" {
		t.Fatalf("first order: %+v", out.First)
	}
	if r := out.Other.Refusal; out.Other.OK || r == nil || r.Code != string(toolkit.Conflict) || r.Error == nil ||
		r.Error.Details["idempotency_key"] == nil || r.Error.Details["tool"] != draftorder.StartTool {
		t.Fatalf("another basket under the key: %+v (refusal %+v)", out.Other, out.Other.Refusal)
	}
	if !out.Repeat.OK || out.Repeat.Status.Confirmation == nil || out.Repeat.Status.Confirmation.QuoteHash != out.Hash {
		t.Fatalf("a repeat of the first order: %+v", out.Repeat)
	}

	// 3. Confirm, cancel the written draft (its run holds it until
	// then), and confirm again after the end.
	if !out.Confirm.OK || out.Confirm.Answer.Result.State != draftorder.StateDraftCreated || out.Confirm.Answer.AlreadyDone {
		t.Fatalf("confirm: %+v", out.Confirm)
	}
	if a := out.CancelOrder.Answer; !out.CancelOrder.OK || a.Result == nil || a.Result.State != draftorder.StateCancelled || a.Stock == nil {
		t.Fatalf("cancel_order: %+v (refusal %+v)", out.CancelOrder, out.CancelOrder.Refusal)
	}
	if out.LateConfirm.OK || out.LateConfirm.Refusal == nil || !strings.Contains(strings.ToLower(out.LateConfirm.Refusal.Message), "completed") {
		t.Fatalf("a confirm after the end: %+v (refusal %+v)", out.LateConfirm, out.LateConfirm.Refusal)
	}
	if out.LateConfirmRead.State != draftorder.StateDraftCreated || !out.LateConfirmRead.AlreadyDone {
		t.Fatalf("the closed run's result does not read as already done: %+v", out.LateConfirmRead)
	}
	var drafts int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM draft_orders`).Scan(&drafts); err != nil || drafts != 1 {
		t.Fatalf("draft_orders holds %d rows (%v), want the one confirmed", drafts, err)
	}
}

// fieldsOf is an error's details.fields as strings.
func fieldsOf(e *toolkit.Error) []string {
	raw, _ := e.Details["fields"].([]any)
	out := make([]string, 0, len(raw))
	for _, f := range raw {
		if s, ok := f.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
