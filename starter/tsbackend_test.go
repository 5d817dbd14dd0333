package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/cartwright-dev/cartwright/client/codec"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// tsBackendDir is the Node project of a backend on Temporal's official
// TypeScript SDK (docs/other-languages.md).
var tsBackendDir = filepath.Join("..", "scripts", "ts-backend")

// TestDraftOrderFromTheTypeScriptSDK: a backend on Temporal's official
// TypeScript SDK, written from docs/other-languages.md alone, starts a
// draft order with Update-with-Start (next_action), reads the total,
// queries the status, sees a stale hash refused CONFLICT by the update's
// validator, and confirms the total: one draft order row, and every
// payload it wrote is encrypted with cartwright's codec (which the
// worker, in Go, decoded). The Node packages come from scripts/ts-backend.sh
// setup; without them this test fails, it does not skip.
func TestDraftOrderFromTheTypeScriptSDK(t *testing.T) {
	s := stack(t)
	if _, err := os.Stat(filepath.Join(tsBackendDir, "node_modules", "@temporalio", "client")); err != nil {
		t.Fatalf("the TypeScript SDK is not installed (%v): run scripts/ts-backend.sh setup", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run scripts/ts-backend.sh setup")
	}
	key := freshKey("ts-backend")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "order.mjs")
	cmd.Dir = tsBackendDir
	cmd.Env = append(os.Environ(), "ORDER_USER_ID=u_ts", "ORDER_KEY="+key)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node order.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var out struct {
		WorkflowID   string `json:"workflow_id"`
		FirstState   string `json:"first_state"`
		QueriedState string `json:"queried_state"`
		QuoteHash    string `json:"quote_hash"`
		ResultState  string `json:"result_state"`
		DraftOrderID string `json:"draft_order_id"`
		AlreadyDone  bool   `json:"already_done"`
		Stale        struct {
			Refused bool   `json:"refused"`
			Type    string `json:"type"`
		} `json:"stale"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s (stderr %s)", err, stdout.String(), stderr.String())
	}
	t.Logf("the TypeScript backend read: %s", stdout.String())
	if out.FirstState != draftorder.StateNeedsConfirm || out.QueriedState != draftorder.StateNeedsConfirm ||
		!strings.HasPrefix(out.QuoteHash, "sha256:") {
		t.Fatalf("first answer: %+v", out)
	}
	if !out.Stale.Refused || out.Stale.Type != "CONFLICT" {
		t.Errorf("a stale hash: %+v", out.Stale)
	}
	if out.ResultState != draftorder.StateDraftCreated || out.DraftOrderID == "" || out.AlreadyDone {
		t.Fatalf("confirm: %+v", out)
	}
	var rows int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM draft_orders WHERE workflow_id = $1`, out.WorkflowID).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("draft_orders rows for %s: %d (%v)", out.WorkflowID, rows, err)
	}
	// What the TypeScript client wrote (the start's input, the updates'
	// arguments) is stored encrypted under cartwright's key id.
	it := s.Temporal.GetWorkflowHistory(ctx, out.WorkflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	seen := 0
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range append(e.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads(),
			e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetArgs().GetPayloads()...) {
			seen++
			if string(p.GetMetadata()[codec.MetadataEncoding]) != codec.EncodingEncrypted || len(p.GetMetadata()[codec.MetadataKeyID]) == 0 {
				t.Errorf("event %d: a payload the TypeScript client wrote is not encrypted: %v", e.GetEventId(), p.GetMetadata())
			}
		}
	}
	if seen < 2 {
		t.Fatalf("only %d payloads of the TypeScript client in the history", seen)
	}
}
