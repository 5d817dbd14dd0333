package evidence

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// forgedRow is snap's row as an attacker holding the runtime login makes
// it: the content hashed right (so the row links and verifies as a chain),
// and signed by sign (nil: unsigned, hash format 2, as a build from before
// signing wrote it).
func forgedRow(t *testing.T, s *Store, snap toolkit.Snapshot, sign *RowSigner) (*SnapshotRecord, []byte) {
	t.Helper()
	r, dedupe, err := s.build(snap)
	if err != nil {
		t.Fatal(err)
	}
	if sign != nil {
		if err := sign.signRow(r); err != nil {
			t.Fatal(err)
		}
	} else {
		r.HashFormat = hashFormatContentOnly
		if r.ContentHash, err = r.contentHash(); err != nil {
			t.Fatal(err)
		}
	}
	st := &staged{store: s, r: r, dedupeKey: dedupe}
	row, err := st.rowJSON()
	if err != nil {
		t.Fatal(err)
	}
	return r, row
}

// TestAttackForgedRowsThroughAppendFunctions: the runtime role appends rows
// of made-up content through every append function, each hashed and linked
// right, so the chain alone accepts them: unsigned through
// evidence_append_row, evidence_append_rows and evidence_append_direct_row
// (migration 00250 dropped the format-1 appends); signed by a key of its own; signed by the
// gateway's key for a workflow's row; and a worker's real signature copied
// onto other content. Verify names each (unsigned_row, bad_signature,
// edited_row) and nothing else; reconcile names each as
// evidence_row_forged; the rows the worker signed stay clean.
func TestAttackForgedRowsThroughAppendFunctions(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	gateway := testSigner(t, WriterGateway)
	s.VerifyWith(RowKeysOf(gateway))
	own := testSigner(t, WriterWorker) // the attacker's: no verifier knows it
	const wf = "wf-forged"
	seedChain(t, s, wf, 2)
	made := func(n int) toolkit.Snapshot {
		return snapshot(t, wf, n, map[string]any{"grand_total": map[string]any{"amount": 1, "currency": "AUD"}, "n": n})
	}
	appendRow := func(row []byte) {
		t.Helper()
		if _, err := pool.Exec(ctx, `SELECT * FROM evidence_append_row($1, $2)`, lockClass, string(row)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{} // snapshot id → the problem verify must name
	r, row := forgedRow(t, s, made(10), nil)
	appendRow(row)
	want[r.SnapshotID] = ProblemUnsigned
	r, row = forgedRow(t, s, made(11), own)
	appendRow(row)
	want[r.SnapshotID] = ProblemBadSignature
	// The gateway's key (a compromised gateway) on a workflow's row: its
	// store refuses to sign one, so the attacker signs by hand.
	r, _ = forgedRow(t, s, made(12), nil)
	r.HashFormat, r.SignerKeyID = hashFormatSigned, gateway.KeyID()
	r.ContentHash, _ = r.contentHash()
	r.RowSignature = gateway.sign(evidenceRowMessage(r.ContentHash))
	row, _ = (&staged{store: s, r: r, dedupeKey: "gateway-signed"}).rowJSON()
	appendRow(row)
	want[r.SnapshotID] = ProblemBadSignature
	// A real signature over another row's content hash, on made-up content.
	real, err := s.chain(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	r, _ = forgedRow(t, s, made(13), nil)
	r.HashFormat, r.ContentHash, r.SignerKeyID, r.RowSignature = hashFormatSigned, real[0].ContentHash, real[0].SignerKeyID, real[0].RowSignature
	st := &staged{store: s, r: r, dedupeKey: "copied-signature"}
	row, _ = st.rowJSON()
	appendRow(row)
	want[r.SnapshotID] = ProblemEditedRow
	// Two unsigned rows in one batch.
	r1, row1 := forgedRow(t, s, made(14), nil)
	r2, row2 := forgedRow(t, s, made(15), nil)
	if _, err := pool.Exec(ctx, `SELECT * FROM evidence_append_rows($1, $2)`, lockClass,
		"["+string(row1)+","+string(row2)+"]"); err != nil {
		t.Fatal(err)
	}
	want[r1.SnapshotID], want[r2.SnapshotID] = ProblemUnsigned, ProblemUnsigned
	// A direct call's row, unsigned.
	direct := snapshot(t, "", 17, map[string]any{"n": 17})
	direct.Call, direct.RequestID = toolkit.CallContext{ActivityType: DirectActivityType}, "req-forged-direct"
	rd, rowD := forgedRow(t, s, direct, nil)
	if _, err := pool.Exec(ctx, `SELECT * FROM evidence_append_direct_row($1, $2, 'fp', '{}', false)`, lockClass, string(rowD)); err != nil {
		t.Fatal(err)
	}

	rep, err := s.Verify(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range rep.Problems {
		if got[p.SnapshotID] == "" {
			got[p.SnapshotID] = p.Kind
		}
	}
	if rep.Rows != 8 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("verify named %v over %d rows, want %v:\n%+v", got, rep.Rows, want, rep.Problems)
	}
	if d, err := s.Verify(ctx, rd.ChainKey); err != nil || d.OK || d.First.Kind != ProblemUnsigned {
		t.Fatalf("direct chain: %+v %v, want unsigned_row", d, err)
	}

	rc, err := Reconcile(ctx, pool, ReconcileOptions{RowKeys: s.RowKeys()})
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, v := range rc.Violations {
		if v.Invariant == InvEvidenceRowForged {
			named[v.SnapshotID] = true
		}
	}
	if rc.EvidenceRowsForged != len(want)+1 || !named[rd.SnapshotID] || len(named) != len(want)+1 {
		t.Fatalf("reconcile: %d forged rows %v, want %d: %+v", rc.EvidenceRowsForged, named, len(want)+1, rc.Violations)
	}
	for id := range want {
		if !named[id] {
			t.Errorf("reconcile did not name %s", id)
		}
	}

	// The write's read (CheckWrittenByWorker) refuses each forged row as
	// verify names it, and takes the worker's own.
	rows, err := s.chain(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		kind, detail, err := s.CheckWrittenByWorker(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if kind != want[r.SnapshotID] {
			t.Errorf("CheckWrittenByWorker(%s) = %q (%s), want %q", r.SnapshotID, kind, detail, want[r.SnapshotID])
		}
	}
}

// TestAttackForgedDraftRows: draft rows the runtime role writes itself (it
// may insert and update draft_orders) are named by reconcile: one inserted
// unsigned, one signed by a key of its own, one the worker signed and the
// runtime then changed (its total), one unsigned whose recorded_at the
// runtime set back to before signing (the database keeps its own). A row
// the worker signed for a run that is not a DraftOrder is named
// draft_row_foreign_run. The worker's own row, and a status it later moved,
// are clean.
func TestAttackForgedDraftRows(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	id := func(c string) string { return "do_" + strings.Repeat(c, 26) }
	draft := func(c, wfType string) DraftRowContent {
		return DraftRowContent{DraftOrderID: id(c), QuoteHash: "sha256:" + strings.Repeat("a", 64), GrandTotalMinor: 808,
			Currency: "AUD", ShipToCountry: "AU", CorrelationID: "corr-000000000000000" + strings.ToLower(c)[:1],
			WorkflowID: "wf-draft-" + c, WorkflowType: wfType, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			Total: json.RawMessage(`{"grand_total":{"amount":808,"currency":"AUD"}}`)}
	}
	insertSignedDraft(t, pool, s.Signer(), draft("A", DraftWorkflowType)) // the worker's
	insertSignedDraft(t, pool, s.Signer(), draft("B", "MyOwnFlow"))       // the worker's, for another type's run
	insertSignedDraft(t, pool, testSigner(t, WriterWorker), draft("C", DraftWorkflowType))
	insertSignedDraft(t, pool, s.Signer(), draft("D", DraftWorkflowType))
	for _, q := range []string{
		// unsigned, by hand
		`INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status, quote_id, quote_hash,
			currency, grand_total_minor, total, ship_to_country, ship_to_sealed, ship_to_nonce, ship_to_key_id,
			correlation_id, workflow_id, workflow_type, created_at, expires_at)
			VALUES ('` + id("E") + `', 'uh_00000000000000000000000000000000', 'checkout.create_draft_order', 'key-e-12345', 'open',
			'q1', 'sha256:` + strings.Repeat("b", 64) + `', 'AUD', 808, '{}', 'AU', '\x00', '\x00', 'k1',
			'corr-000000000000000e', 'wf-draft-E', 'DraftOrder', now(), now() + interval '1 hour')`,
		`UPDATE draft_orders SET recorded_at = NULL WHERE draft_order_id = '` + id("E") + `'`,
		`UPDATE draft_orders SET grand_total_minor = 1 WHERE draft_order_id = '` + id("D") + `'`,
		`UPDATE draft_orders SET status = 'expired' WHERE draft_order_id = '` + id("A") + `'`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rep, err := Reconcile(ctx, pool, ReconcileOptions{RowKeys: s.RowKeys()})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range rep.Violations {
		switch v.Invariant {
		case InvDraftRowForged, InvDraftRowForeignRun:
			got[v.DraftOrderID] = v.Invariant
		}
	}
	want := map[string]string{id("B"): InvDraftRowForeignRun, id("C"): InvDraftRowForged, id("D"): InvDraftRowForged,
		id("E"): InvDraftRowForged}
	if fmt.Sprint(got) != fmt.Sprint(want) || rep.DraftRowsForged != 3 || rep.DraftRowsForeignRun != 1 {
		t.Fatalf("reconcile named %v (forged %d, foreign %d), want %v:\n%+v", got, rep.DraftRowsForged,
			rep.DraftRowsForeignRun, want, rep.Violations)
	}
}
