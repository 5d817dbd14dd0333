package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// TestBadInputStartsNoWorkflowAndAnUnknownSKUIsAnOutcome on the real dev
// server: every bad input is refused before the start (no workflow with
// its id exists afterwards); an unknown SKU, which only the catalog knows,
// is the pricing tool's answer: the run completes NOT_FOUND with the
// tool's whole error (the SKU named, what to do) and its evidence, in the
// start's answer, the result and the status, and it keeps its key like
// any outcome (the corrected order takes a new key: the same key with
// another basket is CONFLICT).
func TestBadInputStartsNoWorkflowAndAnUnknownSKUIsAnOutcome(t *testing.T) {
	c, s := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()

	bad := map[string]func(*draftorder.Input){
		"quantity 0":         func(in *draftorder.Input) { in.Items[0].Quantity = 0 },
		"quantity -1":        func(in *draftorder.Input) { in.Items[0].Quantity = -1 },
		"quantity 10^12":     func(in *draftorder.Input) { in.Items[0].Quantity = 1_000_000_000_000 },
		"currency XYZ":       func(in *draftorder.Input) { in.Request.Currency = "XYZ" },
		"201-character name": func(in *draftorder.Input) { in.ShipTo.Name = strings.Repeat("n", 201) },
		"destination MX": func(in *draftorder.Input) {
			in.ShipTo = commerce.Address{Name: "Ana", Line1: "Av. Reforma 1", City: "CDMX", PostalCode: "06600", Country: "MX"}
		},
		"confirm_window -1": func(in *draftorder.Input) { in.ConfirmWindow = -1 },
		"actor.type root":   func(in *draftorder.Input) { in.Request.Actor = toolkit.Actor{Type: "root", ID: "x"} },
	}
	for name, spoil := range bad {
		in := order(key("f4-bad"), tshirt)
		spoil(&in)
		_, err := c.StartDraftOrder(ctx, in)
		wantCode(t, name, err, toolkit.InvalidArgument)
		id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
		if _, err := c.Temporal().DescribeWorkflowExecution(ctx, id, ""); err == nil {
			t.Fatalf("%s: a workflow %s was started for a refused input", name, id)
		}
	}

	k := key("f4-retry")
	unknown := order(k, commerce.LineItem{SKU: "NO-SUCH-SKU-F4", Quantity: 1})
	// The start answers with the outcome, and names the run.
	h, err := c.StartDraftOrder(ctx, unknown)
	if err != nil || h.RunID == "" || h.Attached {
		t.Fatalf("start with an unknown sku: %+v, %v", h, err)
	}
	wantNotFound(t, "start's answer", h.Status.Result, "NO-SUCH-SKU-F4")
	res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute)))
	if err != nil {
		t.Fatalf("unknown sku: %v", err)
	}
	wantNotFound(t, "result", &res, "NO-SUCH-SKU-F4")
	st, err := c.Status(ctx, h.WorkflowID)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	wantNotFound(t, "status", st.Result, "NO-SUCH-SKU-F4")
	desc, err := c.Temporal().DescribeWorkflowExecution(ctx, h.WorkflowID, "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("the run of an unknown sku: %v, %v; want completed", desc.GetWorkflowExecutionInfo().GetStatus(), err)
	}
	// Its evidence: the pricing tool's refusal, stored like any answer.
	snaps, err := s.Store.SnapshotsForWorkflow(ctx, h.WorkflowID)
	if err != nil || len(snaps) == 0 || len(res.Evidence) == 0 {
		t.Fatalf("evidence of the NOT_FOUND outcome: %d snapshots, %d refs, %v", len(snaps), len(res.Evidence), err)
	}
	// A confirmation for the ended run passes its error on.
	err = c.Confirm(ctx, h.WorkflowID, "sha256:00")
	if te := wantCode(t, "confirm after NOT_FOUND", err, toolkit.Conflict); te.RecoverySuggestion == "" || te.Details["result_error"] == nil {
		t.Fatalf("confirm after NOT_FOUND: %+v", te)
	}

	// The same key keeps its outcome; the corrected order is a new key.
	again, err := c.StartDraftOrder(ctx, unknown)
	if err != nil || !again.Attached || again.RunID != h.RunID {
		t.Fatalf("the same order again: %+v, %v", again, err)
	}
	_, err = c.StartDraftOrder(ctx, order(k, tshirt))
	wantCode(t, "corrected basket with the spent key", err, toolkit.Conflict)
	fixed, err := c.StartDraftOrder(ctx, order(key("f4-fixed"), tshirt))
	if err != nil || fixed.Status.Confirmation == nil {
		t.Fatalf("corrected order with a new key: %+v, %v", fixed, err)
	}
	if err := c.Cancel(ctx, fixed.WorkflowID, ""); err != nil {
		t.Fatal(err)
	}
}

// wantNotFound fails unless r is the NOT_FOUND outcome of sku with the
// pricing tool's whole error.
func wantNotFound(t *testing.T, what string, r *draftorder.Result, sku string) {
	t.Helper()
	if r == nil || r.State != draftorder.StateNotFound || r.Code != toolkit.NotFound || r.Error == nil {
		t.Fatalf("%s: %+v, want the NOT_FOUND outcome", what, r)
	}
	e := r.Error
	skus, _ := e.Details["skus"].([]any)
	if len(skus) != 1 || skus[0] != sku || e.RecoverySuggestion == "" || e.CanRetry {
		t.Fatalf("%s: error %+v, want details.skus [%s], a recovery suggestion and can_retry false", what, e, sku)
	}
}

// TestReusedKeyWithAnotherBasketIsConflict:
// the same user and key with other items or another address is CONFLICT
// naming the key, while the run is open and after it completed; the same
// order again (another request id) still attaches.
func TestReusedKeyWithAnotherBasketIsConflict(t *testing.T) {
	c, _ := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(2*time.Minute))
	defer cancel()
	k := key("f6")
	first := order(k, tshirt)
	h, err := c.StartDraftOrder(ctx, first)
	if err != nil || h.Attached {
		t.Fatalf("first start: %+v, %v", h, err)
	}
	same := first
	same.Request.RequestID = "req-f6-another-call"
	if again, err := c.StartDraftOrder(ctx, same); err != nil || !again.Attached || again.RunID != h.RunID {
		t.Fatalf("same order, another request id: %+v, %v", again, err)
	}
	otherItems := order(k, commerce.LineItem{SKU: tshirt.SKU, Quantity: tshirt.Quantity + 1})
	otherAddress := order(k, tshirt)
	otherAddress.ShipTo.PostalCode = "10117"
	for name, in := range map[string]draftorder.Input{"other items": otherItems, "other address": otherAddress} {
		_, err := c.StartDraftOrder(ctx, in)
		te := wantCode(t, name+" (run open)", err, toolkit.Conflict)
		if !strings.Contains(te.Message, k) || te.Details["idempotency_key"] != k {
			t.Fatalf("%s: the conflict does not name the key: %s %v", name, te.Message, te.Details)
		}
	}
	if err := c.Cancel(ctx, h.WorkflowID, "test"); err != nil {
		t.Fatal(err)
	}
	if res, err := c.WaitResult(ctx, h.WorkflowID, time.Now().Add(testenv.Deadline(time.Minute))); err != nil || res.State != draftorder.StateCancelled {
		t.Fatalf("cancel: %+v, %v", res, err)
	}
	_, err = c.StartDraftOrder(ctx, otherItems)
	wantCode(t, "other items (run completed)", err, toolkit.Conflict)
}

// TestToolCallStartedWithoutTheCLIRefusesDuplicateKeys: a tool call started with a bare SDK (no client, no CLI: raw
// JSON reaches the worker) with a duplicate key is refused with an
// INVALID_ARGUMENT envelope; the
// worker decodes it as strictly as the CLI does.
func TestToolCallStartedWithoutTheCLIRefusesDuplicateKeys(t *testing.T) {
	c, _ := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	req := key("req-f10")
	raw := `{"call":{"tool":"pricing.get_realtime_quote","request":{"request_id":"` + req + `","actor":{"type":"agent","id":"a"},"user_id":"u_client"},` +
		`"input":{"currency":"EUR","currency":"USD","items":[{"sku":"TEE-ORG-M-WHT","quantity":1}]}}}`
	run, err := c.Temporal().ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "tool-call/u_client/" + req, TaskQueue: c.TaskQueue()},
		toolcall.WorkflowName, json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	// Every answer is an envelope. A refused input holds no
	// result, so the run gives its key back (docs/envelope.md#idempotency):
	// it fails, with the envelope in the failure's details.
	var res toolcall.Result
	err = run.Get(ctx, &res)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != toolcall.ReleasedKeyType || app.Details(&res) != nil {
		t.Fatalf("duplicate key: %v, want the key released with the envelope", err)
	}
	if e := res.Envelope.Error; res.Envelope.OK || e == nil || e.Code != toolkit.InvalidArgument || !strings.Contains(e.Message, "not valid JSON") {
		t.Fatalf("duplicate key: envelope %+v (error %+v), want INVALID_ARGUMENT", res.Envelope, e)
	}
}
