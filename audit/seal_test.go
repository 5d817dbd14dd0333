package audit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// recordEnvelope is support.record_approval's answer for a decision, as
// the history holds it.
func recordEnvelope(t *testing.T, version string, rec support.ApprovalRecord) *toolkit.Response {
	t.Helper()
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return &toolkit.Response{OK: true, Tool: support.RecordApprovalTool, Version: version, Data: data}
}

func recordOf(s support.SealedDecision) support.ApprovalRecord {
	r := support.ApprovalRecord{Flow: "draft_order", Subject: "compliance review", ApprovalID: s.ApprovalID,
		Decision: s.Decision, Approver: s.Approver, ApproverRole: support.RoleCompliance, Reason: s.Reason, StaffVerified: true}
	if s.Seal != nil {
		r.Seal = &support.RecordedSeal{Seal: *s.Seal, SealID: s.Seal.ID(), ReasonSHA256: support.ReasonSHA256(s.Reason)}
	}
	return r
}

// TestAuditChecksEachDecisionsSeal: a recorded decision whose seal
// verifies is clean; one edited after sealing (another approver, reason or
// decision), one without a seal, and one whose seal id lies are findings;
// without the key the audit says it could not check; a decision recorded
// before seals is a note.
func TestAuditChecksEachDecisionsSeal(t *testing.T) {
	const apr = "apr_0123456789abcdef"
	good := sealtest.Seal(t, "bob.compliance", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove, Reason: "ok"})
	edit := func(f func(*support.ApprovalRecord)) support.ApprovalRecord {
		r := recordOf(good)
		s := *r.Seal
		r.Seal = &s
		f(&r)
		return r
	}
	other, _ := support.NewSealRing("rotated-out", map[string][]byte{"rotated-out": []byte("a key this audit does not hold, 32 bytes+")})
	unknownKey, _ := other.Seal("bob.compliance", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove})
	cases := []struct {
		name    string
		version string
		rec     support.ApprovalRecord
		seals   *support.SealRing
		kind    string // "" clean, else the finding (or note) kind
		// redacted: the sanitizer changed the output (personal data in
		// the reason), as the envelope's meta says.
		redacted bool
	}{
		{"verified", "2.0.0", recordOf(good), sealtest.Ring(), "", false},
		{"approver changed", "2.0.0", edit(func(r *support.ApprovalRecord) { r.Approver = "carol.admin" }), sealtest.Ring(), KindSealInvalid, false},
		{"reason changed", "2.0.0", edit(func(r *support.ApprovalRecord) { r.Reason = "changed later" }), sealtest.Ring(), KindSealInvalid, false},
		{"decision changed", "2.0.0", edit(func(r *support.ApprovalRecord) { r.Decision = support.DecisionReject }), sealtest.Ring(), KindSealInvalid, false},
		{"seal id changed", "2.0.0", edit(func(r *support.ApprovalRecord) { r.Seal.SealID = "seal_0000000000000000" }), sealtest.Ring(), KindSealInvalid, false},
		{"reason redacted", "2.0.0", edit(func(r *support.ApprovalRecord) { r.Reason = "call [redacted:phone] first" }), sealtest.Ring(), "", true},
		{"no seal", "2.0.0", edit(func(r *support.ApprovalRecord) { r.Seal = nil }), sealtest.Ring(), KindSealInvalid, false},
		{"no ring", "2.0.0", recordOf(good), nil, KindSealUnverifiable, false},
		{"key not held", "2.0.0", recordOf(unknownKey), sealtest.Ring(), KindSealUnverifiable, false},
		{"before seals", "1.0.0", edit(func(r *support.ApprovalRecord) { r.Seal = nil }), sealtest.Ring(), NoteUnsealedDecision, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rep Report
			env := recordEnvelope(t, c.version, c.rec)
			env.Meta.RedactionApplied = c.redacted
			checkSeal(Deps{Seals: c.seals}, env, Finding{ActivityID: "7"}, &rep)
			got := append(append([]Finding{}, rep.Findings...), rep.Notes...)
			switch {
			case c.kind == "" && len(got) != 0:
				t.Fatalf("a verified seal reported: %+v", got)
			case c.kind != "" && (len(got) != 1 || got[0].Kind != c.kind):
				t.Fatalf("reported %+v, want one %s", got, c.kind)
			case c.kind == NoteUnsealedDecision && len(rep.Findings) != 0:
				t.Fatalf("a decision from before seals is a finding: %+v", rep.Findings)
			case c.kind != "" && !strings.Contains(got[0].String(), "activity 7"):
				t.Fatalf("the finding does not name the activity: %s", got[0])
			}
		})
	}
}
