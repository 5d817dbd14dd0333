package audit_test

import (
	"testing"

	"github.com/cartwright-dev/cartwright/audit"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
)

// A staff decision support.record_approval refuses is a failed activity
// (red in the Web UI, never retried: docs/approvals.md#what-staff-see);
// the audit still checks the refusal it failed with against its evidence
// snapshot, like a completed activity's answer, and the run audits clean.
func TestRefusedDecisionIsCheckedLikeAnAnswer(t *testing.T) {
	s := newRealStack(t)
	in := orderInput(uniqueKey("audit-refused"), chocolate, sydney, "AUD")
	runID, res := s.runDraftOrder(t, s.tq, in,
		driver{refuseFirst: "caol.admin", decision: "approve", approver: "carol.admin", reason: "personal quantity"})
	requireState(t, res, draftorder.StateDraftCreated)
	id, _ := workflows.DraftOrderID(in.Request.UserID, in.Request.IdempotencyKey)
	rep, err := audit.Audit(ctxT(t), s.deps, audit.ByID(id, runID))
	logReport(t, rep)
	if audit.ExitCode(rep, err) != audit.ExitClean {
		t.Fatalf("audit: exit %d (%v), findings %v", audit.ExitCode(rep, err), err, rep.Findings)
	}
	var refused, recorded int
	for _, c := range rep.Activities {
		if c.Tool != support.RecordApprovalTool {
			continue
		}
		switch {
		case c.Refusal && c.OK && c.SnapshotID != "":
			refused++
		case !c.Refusal && c.OK:
			recorded++
		}
	}
	if refused != 1 || recorded != 1 {
		t.Fatalf("record_approval checks: %d refusals, %d decisions checked, want 1 and 1: %+v", refused, recorded, rep.Activities)
	}
	for _, n := range rep.Notes {
		if n.Tool == support.RecordApprovalTool {
			t.Errorf("the refusal's snapshot is only noted: %s", n)
		}
	}
}
