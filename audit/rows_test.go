package audit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/commerce/quotesealtest"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestAuditNamesChangedDraftOrderRow: a draft_orders total set to 1 by a superuser leaves the
// evidence chain intact; the audit's row cross-check names it.
func TestAuditNamesChangedDraftOrderRow(t *testing.T) {
	s := newRealStack(t)
	in := orderInput(uniqueKey("audit-row"), tees, berlin, "EUR")
	_, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, draftorder.StateDraftCreated)
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)

	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	if code := audit.ExitCode(rep, err); code != audit.ExitClean {
		logReport(t, rep)
		t.Fatalf("fresh draft order: exit %d (%v)", code, err)
	}
	testenv.SuperExec(t, s.pool, `UPDATE draft_orders SET grand_total_minor = 1 WHERE draft_order_id = $1`, res.DraftOrder.DraftOrderID)
	rep, err = audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	// Unlike its create call, no longer what the worker signed, and a total
	// its workflow never priced.
	if audit.ExitCode(rep, err) != audit.ExitFindings || len(rep.Findings) != 3 {
		t.Fatalf("changed row: exit %d (%v), findings %v", audit.ExitCode(rep, err), err, rep.Findings)
	}
	if f := rep.Findings[0]; f.Kind != audit.KindRowMismatch || f.Tool != "checkout.create_draft_order" {
		t.Fatalf("finding = %+v", f)
	}
	if f := rep.Findings[1]; f.Kind != audit.KindRowForged {
		t.Fatalf("finding = %+v", f)
	}
	if f := rep.Findings[2]; f.Kind != audit.KindRowUnbacked {
		t.Fatalf("finding = %+v", f)
	}
}

// A draft row a superuser inserts beside a genuine order, naming its
// workflow, at 5.01 EUR for the order's goods: the evidence chain is
// intact, and the audit names the row as written by none of the run's
// create calls and backed by none of its totals
// (docs/quote-seals.md#audit-and-reconcile).
func TestAuditFlagsForgedDraftRow(t *testing.T) {
	s := newRealStack(t)
	in := orderInput(uniqueKey("audit-forged"), tees, berlin, "EUR")
	_, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, draftorder.StateDraftCreated)
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	forged := "do_" + strings.Repeat("F", 26)
	testenv.SuperExec(t, s.pool, `INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status,
		quote_id, quote_hash, currency, grand_total_minor, total, ship_to_country, ship_to_sealed, ship_to_nonce,
		ship_to_key_id, correlation_id, workflow_id, run_id, created_at, expires_at)
		SELECT $2, user_id_hash, tool, idempotency_key || '-forged', status, quote_id, 'sha256:' || repeat('0', 64), currency, 501,
		total, ship_to_country, ship_to_sealed, ship_to_nonce, ship_to_key_id, correlation_id, workflow_id, run_id, now(), expires_at
		FROM draft_orders WHERE draft_order_id = $1`, res.DraftOrder.DraftOrderID, forged)

	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	kinds := map[string]bool{}
	for _, f := range rep.Findings {
		if !strings.Contains(f.Detail, forged) {
			t.Fatalf("finding about another row: %+v", f)
		}
		kinds[f.Kind] = true
	}
	if audit.ExitCode(rep, err) != audit.ExitFindings || !kinds[audit.KindRowForeign] || !kinds[audit.KindRowUnbacked] {
		t.Fatalf("forged row: exit %d (%v), findings %+v", audit.ExitCode(rep, err), err, rep.Findings)
	}
}

// TestAuditNamesRowsForgedIntoARun: after a real draft order, the runtime
// login appends a compute_total row of its own into the run's chain,
// through the append function and signed by a key no verifier knows: the
// chain links and every hash is right, and the audit names it
// (chain_broken, bad_signature), where the run audited clean before.
func TestAuditNamesRowsForgedIntoARun(t *testing.T) {
	s := newRealStack(t)
	in := orderInput(uniqueKey("audit-forged"), tees, berlin, "EUR")
	runID, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, draftorder.StateDraftCreated)
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	if rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, "")); audit.ExitCode(rep, err) != audit.ExitClean {
		logReport(t, rep)
		t.Fatalf("fresh draft order: %v", err)
	}
	own, _ := evidencetest.StoreWithKey(t, s.pool, nil, s.ws.EvidenceKey)
	own.SignWith(evidencetest.Signer(t, evidence.WriterWorker))
	forged, err := own.Record(ctxT(t), toolkit.Snapshot{Tool: "checkout.compute_total", ToolVersion: "1.0.0",
		Call:      toolkit.CallContext{WorkflowID: id, RunID: runID, ActivityID: "99", ActivityType: "CallTool", Attempt: 1, WorkflowType: "DraftOrder"},
		RequestID: "req-forged", CorrelationID: "corr-00000000000000f9", UserID: in.Request.UserID,
		InputDigest: "sha256:" + strings.Repeat("9", 64), Output: json.RawMessage(`{"grand_total":{"amount":1,"currency":"EUR"}}`),
		Status: toolkit.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	named := false
	for _, f := range rep.Findings {
		named = named || (f.Kind == audit.KindChainBroken && f.SnapshotID == forged && strings.Contains(f.Detail, evidence.ProblemBadSignature))
	}
	if audit.ExitCode(rep, err) != audit.ExitFindings || !named {
		t.Fatalf("forged row %s: exit %d (%v), findings %v", forged, audit.ExitCode(rep, err), err, rep.Findings)
	}
}

// TestReconcileNamesATotalItsSnapshotsDoNotGive: after a real draft order,
// a second draft row whose total names the run's sealed snapshots but
// carries another shipping amount and grand total, signed with the
// worker's own key (a worker fooled into writing it), is named
// draft_total_mismatch by the reconcile pass the worker runs; the real
// row is not.
func TestReconcileNamesATotalItsSnapshotsDoNotGive(t *testing.T) {
	s := newRealStack(t)
	in := orderInput(uniqueKey("total-mismatch"), tees, berlin, "EUR")
	_, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, draftorder.StateDraftCreated)
	ctx := ctxT(t)
	var total json.RawMessage
	var c evidence.DraftRowContent
	if err := s.pool.QueryRow(ctx, `SELECT total, user_id_hash, workflow_id, run_id, correlation_id, ship_to_country,
		ship_to_region, ship_to_postal, ship_to_sealed, ship_to_nonce, ship_to_key_id, created_at, expires_at
		FROM draft_orders WHERE draft_order_id = $1`, res.DraftOrder.DraftOrderID).Scan(&total, &c.UserIDHash, &c.WorkflowID,
		&c.RunID, &c.CorrelationID, &c.ShipToCountry, &c.ShipToRegion, &c.ShipToPostal, &c.ShipToSealed, &c.ShipToNonce,
		&c.ShipToKeyID, &c.CreatedAt, &c.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	var tot commerce.Total
	if err := json.Unmarshal(total, &tot); err != nil {
		t.Fatal(err)
	}
	tot.Shipping.Amount, tot.GrandTotal.Amount = 1, tot.GrandTotal.Amount-tot.Shipping.Amount+1
	c.Total, _ = json.Marshal(tot)
	c.DraftOrderID, c.Tool, c.IdempotencyKey = "do_01M8H00000000000000000TM01", commerce.ToolCreateDraftOrder, uniqueKey("tm")
	c.QuoteID, c.QuoteHash, c.Currency, c.GrandTotalMinor, c.WorkflowType = tot.QuoteID, tot.QuoteHash, tot.Currency,
		tot.GrandTotal.Amount, draftorder.WorkflowName
	sig, err := s.ws.Store.Signer().SignDraft(&c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status,
		quote_id, quote_hash, currency, grand_total_minor, total, ship_to_country, ship_to_region, ship_to_postal,
		ship_to_sealed, ship_to_nonce, ship_to_key_id, correlation_id, workflow_id, run_id, workflow_type, created_at,
		expires_at, signer_key_id, row_signature)
		VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
		c.DraftOrderID, c.UserIDHash, c.Tool, c.IdempotencyKey, c.QuoteID, c.QuoteHash, c.Currency, c.GrandTotalMinor,
		string(c.Total), c.ShipToCountry, c.ShipToRegion, c.ShipToPostal, c.ShipToSealed, c.ShipToNonce, c.ShipToKeyID,
		c.CorrelationID, c.WorkflowID, c.RunID, c.WorkflowType, c.CreatedAt, c.ExpiresAt, c.SignerKeyID, sig); err != nil {
		t.Fatal(err)
	}
	seals, err := commerce.ParseSealRing(quotesealtest.Spec(), quotesealtest.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := evidence.Reconcile(ctx, s.pool, evidence.ReconcileOptions{RowKeys: s.ws.Store.RowKeys(),
		CheckDraftTotal: commerce.DraftTotalCheck(seals, s.ws.Store)})
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]string{}
	for _, v := range rep.Violations {
		if v.Invariant == evidence.InvDraftTotalMismatch {
			named[v.DraftOrderID] = v.Detail
		}
	}
	if rep.DraftTotalsMismatched != 1 || named[c.DraftOrderID] == "" || rep.DraftRowsForged != 0 {
		t.Fatalf("reconcile: %d totals mismatched %v, %d forged; want only %s:\n%+v", rep.DraftTotalsMismatched, named,
			rep.DraftRowsForged, c.DraftOrderID, rep.Violations)
	}
	t.Logf("named: %s", named[c.DraftOrderID])
}
