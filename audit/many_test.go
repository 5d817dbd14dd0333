package audit_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// TestAuditManyFindsWhatAuditFinds: AuditMany reads a page's evidence in a
// few statements instead of run by run (docs/performance.md#audit-rate).
// Draft orders tampered with in every way the checks know — an edited
// snapshot, a deleted one, one moved to another workflow's chain (outside
// the page's reads), one relabelled to another activity, a changed draft
// row, a forged one — must get from AuditMany exactly the report Audit
// gives each alone, findings and notes in the same order, and an untouched
// one stays CLEAN.
func TestAuditManyFindsWhatAuditFinds(t *testing.T) {
	s := newRealStack(t)
	ctx := ctxT(t)
	names := []string{"clean", "edited", "deleted", "moved", "relabelled", "row-changed", "row-forged"}
	ids := map[string]string{}
	for _, name := range names {
		in := orderInput(uniqueKey("many-"+name), tees, berlin, "EUR")
		if err := s.driveOne(ctx, in); err != nil {
			t.Fatal(err)
		}
		ids[name], _ = workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	}
	snap := func(name, tool string) string {
		var id string
		if err := s.pool.QueryRow(ctx, `SELECT snapshot_id FROM evidence_snapshots WHERE workflow_id = $1 AND tool = $2 LIMIT 1`,
			ids[name], tool).Scan(&id); err != nil {
			t.Fatalf("snapshot of %s %s: %v", name, tool, err)
		}
		return id
	}
	draft := func(name string) string {
		var id string
		if err := s.pool.QueryRow(ctx, `SELECT draft_order_id FROM draft_orders WHERE workflow_id = $1`, ids[name]).Scan(&id); err != nil {
			t.Fatalf("draft row of %s: %v", name, err)
		}
		return id
	}
	testenv.SuperExec(t, s.pool, `UPDATE evidence_snapshots SET output = jsonb_set(output, '{grand_total,amount}', '1') WHERE snapshot_id = $1`,
		snap("edited", commerce.ToolComputeTotal))
	testenv.SuperExec(t, s.pool, `DELETE FROM evidence_snapshots WHERE snapshot_id = $1`, snap("deleted", commerce.ToolChooseOrigins))
	testenv.SuperExec(t, s.pool, `UPDATE evidence_snapshots SET chain_key = 'elsewhere-'||chain_key, workflow_id = 'elsewhere-'||workflow_id
		WHERE snapshot_id = $1`, snap("moved", commerce.ToolGetQuote))
	testenv.SuperExec(t, s.pool, `UPDATE evidence_snapshots SET activity_id = '999' WHERE snapshot_id = $1`,
		snap("relabelled", commerce.ToolCheckCompliance))
	testenv.SuperExec(t, s.pool, `UPDATE draft_orders SET grand_total_minor = 1 WHERE draft_order_id = $1`, draft("row-changed"))
	testenv.SuperExec(t, s.pool, `INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status,
		quote_id, quote_hash, currency, grand_total_minor, total, ship_to_country, ship_to_sealed, ship_to_nonce,
		ship_to_key_id, correlation_id, workflow_id, run_id, created_at, expires_at)
		SELECT $2, user_id_hash, tool, idempotency_key || '-forged', status, quote_id, 'sha256:' || repeat('0', 64), currency, 501,
		total, ship_to_country, ship_to_sealed, ship_to_nonce, ship_to_key_id, correlation_id, workflow_id, run_id, now(), expires_at
		FROM draft_orders WHERE draft_order_id = $1`, draft("row-forged"), "do_"+strings.Repeat("F", 26))

	// The written drafts' runs still hold them: AuditMany audits running
	// histories as it does closed ones.
	query := fmt.Sprintf(`WorkflowType = %q AND TaskQueue = %q AND CartwrightState = %q`, draftorder.WorkflowName, s.tq, draftorder.StateHolding)
	waitVisible(t, &stack{c: s.c}, query, len(names))
	m, err := audit.AuditMany(ctx, s.deps, query)
	if err != nil || m.Audited != len(names) || m.Failed != 0 {
		t.Fatalf("AuditMany: %v, %d audited of %d, errors %v", err, m.Audited, len(names), m.Errors)
	}
	want := map[string][]string{
		"clean":       nil,
		"edited":      {audit.KindHashMismatch, audit.KindChainBroken, audit.KindRowUnbacked},
		"deleted":     {audit.KindMissingSnapshot, audit.KindChainBroken},
		"moved":       {audit.KindSnapshotMismatch, audit.KindChainBroken},
		"relabelled":  {audit.KindSnapshotMismatch, audit.KindChainBroken},
		"row-changed": {audit.KindRowMismatch, audit.KindRowUnbacked},
		"row-forged":  {audit.KindRowForeign, audit.KindRowUnbacked},
	}
	for _, many := range m.Reports {
		name := ""
		for n, id := range ids {
			if id == many.WorkflowID {
				name = n
			}
		}
		one, err := audit.Audit(ctx, s.deps, audit.ByID(many.WorkflowID, many.RunID))
		if err != nil {
			t.Fatalf("Audit of %s: %v", name, err)
		}
		if a, b := reportJSON(t, many), reportJSON(t, one); a != b {
			t.Errorf("%s: AuditMany reported\n%s\nAudit alone\n%s", name, a, b)
		}
		kinds := map[string]bool{}
		for _, f := range many.Findings {
			kinds[f.Kind] = true
		}
		for _, k := range want[name] {
			if !kinds[k] {
				logReport(t, many)
				t.Errorf("%s: no %s finding", name, k)
			}
		}
		if many.Clean != (len(want[name]) == 0) {
			logReport(t, many)
			t.Errorf("%s: clean = %v", name, many.Clean)
		}
	}
}

// reportJSON is what two reports of one run must agree on.
func reportJSON(t *testing.T, r audit.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
