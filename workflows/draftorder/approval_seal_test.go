package draftorder

import (
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/workflows"
	"github.com/cartwright-dev/cartwright/workflows/approval"
	"github.com/cartwright-dev/cartwright/workflows/internal/flowtest"
)

// TestUnsealedDecisionsAreRefused: a decision that names an active staff
// member allowed to decide, sent as a raw signal (no seal), or one without
// any approver, decides nothing: the order keeps waiting, the refusal is
// unauthenticated_decision and the current details say to sign in instead.
// A decision sealed for someone whose role may not decide is refused too;
// the decision sealed for the signed-in compliance officer is recorded
// under that id with its seal's id (docs/approvals.md#sealed-decisions).
func TestUnsealedDecisionsAreRefused(t *testing.T) {
	f := newFixture(t)
	uncertain(f)
	var typed, bare, wrongRole string
	var mid Status
	var sealID string
	f.At(time.Minute, func() { f.unsealedApproval("approve", "carol.admin", "") })
	f.At(2*time.Minute, func() {
		typed = f.details()
		id := f.status().Approvals.Pending.ApprovalID
		f.Env.SignalWorkflow(approval.SignalApproval, map[string]any{"approval_id": id, "decision": "approve"})
	})
	f.At(3*time.Minute, func() {
		bare = f.details()
		f.approval("approve", "alice.support", "")
	})
	f.At(4*time.Minute, func() {
		wrongRole = f.details()
		mid = f.status()
		id := mid.Approvals.Pending.ApprovalID
		s := flowtest.SealedAs("bob.compliance", id, "approve", "UN38.3 summary on file")
		sealID = s.Seal.ID()
		f.Env.SignalWorkflow(approval.SignalApproval, s)
	})
	f.At(5*time.Minute, f.confirmPublished)
	res := f.run()
	if res.State != StateDraftCreated || res.Approval == nil || res.Approval.Approver != "bob.compliance" ||
		res.Approval.SealID != sealID || !strings.HasPrefix(sealID, "seal_") {
		t.Fatalf("result = %+v (approval %+v), want bob.compliance's decision with seal %s", res, res.Approval, sealID)
	}
	if mid.State != StateAwaitingApproval {
		t.Fatalf("an unsealed decision decided: state %s", mid.State)
	}
	want := []string{"approval:" + workflows.RejectUnauthenticated, "approval:" + workflows.RejectUnauthenticated, "approval:" + workflows.RejectApproverForbidden}
	if got := flowtest.RejectedReasons(mid.Rejected); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("refusals %v, want %v", got, want)
	}
	for name, d := range map[string]string{"typed approver": typed, "no approver": bare} {
		if !strings.HasPrefix(d, "**DECISION REFUSED: not signed in") || !strings.Contains(d, "`"+workflows.RejectUnauthenticated+"`") ||
			!strings.Contains(d, support.SignInHint) {
			t.Errorf("%s: the current details do not say the decision was refused and what to do:\n%s", name, d)
		}
	}
	if !strings.Contains(wrongRole, "`"+workflows.RejectApproverForbidden+"`, approver alice.support") || !strings.Contains(wrongRole, "compliance or admin") {
		t.Errorf("role not allowed: details:\n%s", wrongRole)
	}
	// The typed approver's check went to the record call (recorded runs made
	// that call too); the bare one was refused by the workflow.
	if n := f.Count("RecordApproval"); n != 3 {
		t.Errorf("RecordApproval calls = %d, want 3 (typed, alice, bob)", n)
	}
}
