package audit_test

import (
	"testing"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/workflows"
)

// TestAuditNamesChangedDraftOrderRow: a draft_orders total set to 1 by a superuser leaves the
// evidence chain intact; the audit's row cross-check names it.
func TestAuditNamesChangedDraftOrderRow(t *testing.T) {
	s := newRealStack(t)
	in := orderInput(uniqueKey("audit-row"), tees, berlin, "EUR")
	_, res := s.runDraftOrder(t, s.tq, in, driver{})
	requireState(t, res, workflows.StateDraftCreated)
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)

	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	if code := audit.ExitCode(rep, err); code != audit.ExitClean {
		logReport(t, rep)
		t.Fatalf("fresh draft order: exit %d (%v)", code, err)
	}
	testenv.SuperExec(t, s.pool, `UPDATE draft_orders SET grand_total_minor = 1 WHERE draft_order_id = $1`, res.DraftOrder.DraftOrderID)
	rep, err = audit.Audit(ctxT(t), s.deps, audit.ByID(id, ""))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitFindings || len(rep.Findings) != 1 {
		t.Fatalf("changed row: exit %d (%v), findings %v", audit.ExitCode(rep, err), err, rep.Findings)
	}
	if f := rep.Findings[0]; f.Kind != audit.KindRowMismatch || f.Tool != "checkout.create_draft_order" {
		t.Fatalf("finding = %+v", f)
	}
}
