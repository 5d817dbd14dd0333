package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestAttackForgedRowsThroughTheCLI: on the real stack, the runtime login
// (what the worker and the MCP gateway hold) writes evidence and a draft
// row of its own, each through what that role may call, and `starter
// reconcile` names every one (exit 1), where the worker's own row passes:
// a row signed by a key no verifier knows (evidence_append_row, through a
// store of its own), an unsigned row (evidence_append_row by hand), and a
// draft row inserted by hand.
func TestAttackForgedRowsThroughTheCLI(t *testing.T) {
	s := stack(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	snap := func(wf, tool string) toolkit.Snapshot {
		out := json.RawMessage(`{"grand_total":{"amount":808,"currency":"AUD"}}`)
		return toolkit.Snapshot{Tool: tool, ToolVersion: "1.0.0", Call: toolkit.CallContext{WorkflowID: wf, RunID: "r1",
			ActivityID: "1", ActivityType: "CallTool", WorkflowType: "DraftOrder"}, RequestID: "req-" + wf,
			CorrelationID: "corr-00000000000000f1", UserID: "u_1", InputDigest: "sha256:" + strings.Repeat("1", 64),
			Output: out, Status: toolkit.StatusOK}
	}
	if _, err := s.Store.Record(ctx, snap("wf-genuine", "checkout.compute_total")); err != nil {
		t.Fatal(err)
	}
	var rep evidence.ReconcileReport
	if r := jsonOut(t, &rep, "reconcile"); r.code != exitOK || rep.ViolationCount() != 0 {
		t.Fatalf("the worker's own row: exit %d %+v: %s", r.code, rep, r.stderr)
	}

	// A store of the attacker's own, on the runtime login, with its own key.
	own, _ := evidencetest.StoreWithKey(t, s.Pool, nil, s.EvidenceKey)
	own.SignWith(evidencetest.Signer(t, evidence.WriterWorker))
	signed, err := own.Record(ctx, snap("wf-forged", "checkout.compute_total"))
	if err != nil {
		t.Fatal(err)
	}
	// By hand: evidence_append_row with no signature at all.
	row := `{"snapshot_id":"ev_01M8H0000000000000000000F2","dedupe_key":"forged-2","chain_key":"wf-forged",
		"tool":"checkout.compute_total","tool_version":"1.0.0","build":"b","workflow_id":"wf-forged","run_id":"r1",
		"activity_id":"2","activity_type":"CallTool","attempt":1,"request_id":"req-f","correlation_id":"corr-00000000000000f2",
		"user_id_hash":"uh_00000000000000000000000000000000","input_digest":"sha256:` + strings.Repeat("2", 64) + `",
		"output":{"grand_total":{"amount":1,"currency":"AUD"}},"output_hash":"sha256:` + strings.Repeat("3", 64) + `",
		"ruleset_version":"r","ttl_seconds":60,"status":"ok","created_at":"2026-11-28T10:00:00Z",
		"content_hash":"sha256:` + strings.Repeat("4", 64) + `"}`
	if _, err := s.Pool.Exec(ctx, `SELECT * FROM evidence_append_row(17750, $1)`, row); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool.Exec(ctx, `INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status,
		quote_id, quote_hash, currency, grand_total_minor, total, ship_to_country, ship_to_sealed, ship_to_nonce,
		ship_to_key_id, correlation_id, workflow_id, workflow_type, created_at, expires_at)
		VALUES ('do_01M8H0000000000000000000F3', 'uh_00000000000000000000000000000000', 'checkout.create_draft_order',
		'forged-key-1', 'open', 'q1', 'sha256:`+strings.Repeat("5", 64)+`', 'AUD', 808, '{}', 'AU', '\x00', '\x00', 'k1',
		'corr-00000000000000f3', 'wf-forged', 'DraftOrder', now(), now() + interval '1 hour')`); err != nil {
		t.Fatal(err)
	}

	rep = evidence.ReconcileReport{}
	r := jsonOut(t, &rep, "reconcile")
	named := map[string]string{}
	for _, v := range rep.Violations {
		named[v.SnapshotID+v.DraftOrderID] = v.Invariant
	}
	want := map[string]string{signed: evidence.InvEvidenceRowForged, "ev_01M8H0000000000000000000F2": evidence.InvEvidenceRowForged,
		"do_01M8H0000000000000000000F3": evidence.InvDraftRowForged}
	for id, inv := range want {
		if named[id] != inv {
			t.Errorf("%s: named %q, want %s", id, named[id], inv)
		}
	}
	if r.code != exitRefused || rep.EvidenceRowsForged != 2 || rep.DraftRowsForged != 1 {
		t.Fatalf("forged rows: exit %d, report %+v, stderr %s", r.code, rep, r.stderr)
	}
}
