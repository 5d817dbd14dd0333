package evidence

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// A draft_orders row changed by a superuser no longer matches the create
// snapshot and is a violation; an untouched one, or a fresh row still
// waiting for its snapshot, is not.
func TestReconcileFindsChangedDraftRow(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	hash := "sha256:" + fmt.Sprintf("%064d", 7)
	insert := func(id string, age time.Duration) {
		t.Helper()
		now := time.Now().UTC().Truncate(time.Microsecond)
		insertSignedDraft(t, pool, s.Signer(), DraftRowContent{DraftOrderID: id, QuoteHash: hash, GrandTotalMinor: 7019,
			CorrelationID: "corr-0000000000000001", WorkflowID: "wf-rows", CreatedAt: now.Add(-age), ExpiresAt: now.Add(24 * time.Hour)})
	}
	// What backs the rows: their workflow priced the total and
	// compliance allowed it (TestReconcileFlagsUnbackedDraftRows).
	recordBacking(t, s, "wf-rows", 100, hash, 7019, "allow")
	snap := func(n int, id string) {
		t.Helper()
		sn := snapshot(t, "wf-rows", n, map[string]any{"draft_order_id": id, "status": "open", "quote_hash": hash,
			"grand_total": map[string]any{"amount": 7019, "currency": "EUR"}})
		sn.Tool = createDraftTool
		if _, err := s.Record(ctx, sn); err != nil {
			t.Fatal(err)
		}
	}
	id := func(c string) string { return "do_" + strings.Repeat(c, 26) }
	ok, changed, fresh := id("A"), id("B"), id("C")
	insert(ok, time.Minute)
	snap(1, ok)
	insert(changed, time.Minute)
	snap(2, changed)
	insert(fresh, time.Second)
	rep, err := Reconcile(ctx, pool, ReconcileOptions{RowKeys: s.RowKeys()})
	if err != nil || rep.DraftRowsMismatched != 0 {
		t.Fatalf("before tampering: %+v %v", rep, err)
	}
	testenv.SuperExec(t, pool, `UPDATE draft_orders SET grand_total_minor = 1 WHERE draft_order_id = $1`, changed)
	rep, err = Reconcile(ctx, pool, ReconcileOptions{RowKeys: s.RowKeys()})
	// The changed total is also one its workflow never priced.
	// And no longer the row the worker signed.
	if err != nil || rep.DraftRowsMismatched != 1 || rep.DraftRowsUnbacked != 1 || rep.DraftRowsForged != 1 || rep.ViolationCount() != 3 {
		t.Fatalf("after tampering: %+v %v", rep, err)
	}
	if v := rep.Violations[0]; v.Invariant != InvDraftRowMismatch || v.DraftOrderID != changed {
		t.Fatalf("violation = %+v", v)
	}
}

// recordBacking writes the evidence a draft row of wf rests on: a pricing
// snapshot, a compliance verdict, and a sealed compute_total snapshot of
// quote hash and amount naming that pricing snapshot.
func recordBacking(t *testing.T, s *Store, wf string, n int, hash string, amount int64, verdict string) {
	t.Helper()
	ctx := ctxT(t)
	record := func(n int, tool string, out map[string]any) string {
		sn := snapshot(t, wf, n, out)
		sn.Tool = tool
		id, err := s.Record(ctx, sn)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	pricing := record(n, pricingTool, map[string]any{"quote_id": "q1", "currency": "EUR"})
	record(n+1, complianceTool, map[string]any{"verdict": verdict})
	record(n+2, computeTotalTool, map[string]any{"quote_hash": hash, "grand_total": map[string]any{"amount": amount, "currency": "EUR"},
		"evidence": map[string]any{"pricing_snapshot_id": pricing}})
}

// TestReconcileFlagsUnbackedDraftRows: a draft row inserted by a superuser,
// around every tool, is flagged draft_row_unbacked: one whose workflow has
// no evidence at all, one whose total its workflow never priced, one whose
// workflow's compliance blocked; a row its workflow's evidence backs is not.
func TestReconcileFlagsUnbackedDraftRows(t *testing.T) {
	s, pool := newTestStore(t)
	ctx := ctxT(t)
	hash := func(n int) string { return "sha256:" + fmt.Sprintf("%064d", n) }
	recordBacking(t, s, "wf-backed", 1, hash(1), 6225, "allow")
	recordBacking(t, s, "wf-blocked", 10, hash(2), 6225, "block")
	forge := func(id, wf, quoteHash string, amount int64) {
		testenv.SuperExec(t, pool, `INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status,
			quote_id, quote_hash, currency, grand_total_minor, total, ship_to_country, ship_to_sealed, ship_to_nonce,
			ship_to_key_id, correlation_id, workflow_id, created_at, expires_at)
			VALUES ($1, 'uh_00000000000000000000000000000000', 'checkout.create_draft_order', $1, 'open', 'q1', $2, 'EUR', $3,
			'{}', 'DE', '\x00', '\x00', 'k1', 'corr-0000000000000009', $4, now(), now() + interval '1 day')`,
			id, quoteHash, amount, wf)
	}
	id := func(c string) string { return "do_" + strings.Repeat(c, 26) }
	forge(id("A"), "wf-backed", hash(1), 6225)  // backed: not flagged
	forge(id("B"), "wf-nothing", hash(1), 6225) // no evidence at all
	forge(id("C"), "wf-backed", hash(3), 501)   // a total its workflow never priced (5.01 for 62.25)
	forge(id("D"), "wf-blocked", hash(2), 6225) // compliance blocked
	rep, err := Reconcile(ctx, pool, ReconcileOptions{RowKeys: s.RowKeys()})
	if err != nil {
		t.Fatal(err)
	}
	flagged := map[string]string{}
	for _, v := range rep.Violations {
		if v.Invariant == InvDraftRowUnbacked {
			flagged[v.DraftOrderID] = v.Detail
		}
	}
	if rep.DraftRowsUnbacked != 3 || len(flagged) != 3 || flagged[id("A")] != "" {
		t.Fatalf("unbacked rows %d %v", rep.DraftRowsUnbacked, flagged)
	}
	if !strings.Contains(flagged[id("C")], "priced total") || !strings.Contains(flagged[id("D")], "compliance") ||
		!strings.Contains(flagged[id("B")], "priced total") || !strings.Contains(flagged[id("B")], "compliance") {
		t.Fatalf("details %v", flagged)
	}
}

// insertSignedDraft inserts a draft row of c as the worker writes it:
// signed by signer, for a DraftOrder run (the fields c leaves empty take
// a test's defaults).
func insertSignedDraft(t *testing.T, pool *pgxpool.Pool, signer *RowSigner, c DraftRowContent) {
	t.Helper()
	if c.UserIDHash == "" {
		c.UserIDHash = "uh_00000000000000000000000000000000"
	}
	if c.Tool == "" {
		c.Tool = createDraftTool
	}
	if c.IdempotencyKey == "" {
		c.IdempotencyKey = c.DraftOrderID
	}
	if c.QuoteID == "" {
		c.QuoteID = "q1"
	}
	if c.Currency == "" {
		c.Currency = "EUR"
	}
	if c.Total == nil {
		c.Total = json.RawMessage(`{}`)
	}
	if c.ShipToCountry == "" {
		c.ShipToCountry = "DE"
	}
	if c.ShipToSealed == nil {
		c.ShipToSealed, c.ShipToNonce, c.ShipToKeyID = []byte{0}, []byte{0}, "k1"
	}
	if c.WorkflowType == "" {
		c.WorkflowType = DraftWorkflowType
	}
	sig, err := signer.SignDraft(&c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctxT(t), `INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status,
		quote_id, quote_hash, currency, grand_total_minor, total, ship_to_country, ship_to_region, ship_to_postal,
		ship_to_sealed, ship_to_nonce, ship_to_key_id, correlation_id, workflow_id, run_id, workflow_type, created_at,
		expires_at, signer_key_id, row_signature)
		VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
		$22, $23)`,
		c.DraftOrderID, c.UserIDHash, c.Tool, c.IdempotencyKey, c.QuoteID, c.QuoteHash, c.Currency, c.GrandTotalMinor,
		string(c.Total), c.ShipToCountry, c.ShipToRegion, c.ShipToPostal, c.ShipToSealed, c.ShipToNonce, c.ShipToKeyID,
		c.CorrelationID, c.WorkflowID, c.RunID, c.WorkflowType, c.CreatedAt, c.ExpiresAt, c.SignerKeyID, sig); err != nil {
		t.Fatal(err)
	}
}
