package support_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

type fakeRoster map[string]support.StaffMember

func (f fakeRoster) Lookup(_ context.Context, id string) (support.StaffMember, bool, error) {
	m, ok := f[id]
	return m, ok, nil
}

var roster = fakeRoster{
	"alice.support":  {ID: "alice.support", Role: support.RoleSupport, Active: true},
	"bob.compliance": {ID: "bob.compliance", Role: support.RoleCompliance, Active: true},
	"carol.admin":    {ID: "carol.admin", Role: support.RoleAdmin, Active: true},
	"dave.former":    {ID: "dave.former", Role: support.RoleSupport, Active: false},
}

const apr = "apr_0123456789abcdef"

// TestSpecRegisters checks the spec against the registry's rules and that
// both schemas compile.
func TestSpecRegisters(t *testing.T) {
	reg := toolkit.NewRegistry(schemas.FS)
	if err := support.RegisterTools(reg, nil, sealtest.Ring()); err != nil {
		t.Fatal(err)
	}
}

// record runs the tool's handler on args.
func record(t *testing.T, args support.RecordApprovalArgs) (support.ApprovalRecord, error) {
	t.Helper()
	in, _ := json.Marshal(args)
	h := support.RecordApprovalHandler(roster, sealtest.Ring())
	out, err := h(context.Background(), &toolkit.Call{Input: in, Spec: support.RecordApprovalSpec})
	if err != nil {
		return support.ApprovalRecord{}, err
	}
	return out.Data.(support.ApprovalRecord), nil
}

// argsOf is the tool input for a sealed decision, as the workflow passes it.
func argsOf(s support.SealedDecision, roles ...string) support.RecordApprovalArgs {
	return support.RecordApprovalArgs{Flow: "draft_order", Subject: "compliance review", ApprovalID: s.ApprovalID,
		Decision: s.Decision, Approver: s.Approver, Reason: s.Reason, Seal: s.Seal, AllowedRoles: roles}
}

func TestSealedDecisionIsRecordedWithItsSeal(t *testing.T) {
	s := sealtest.Seal(t, "bob.compliance", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove, Reason: "datasheet checked"})
	rec, err := record(t, argsOf(s, support.RoleCompliance, support.RoleAdmin))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Approver != "bob.compliance" || !rec.StaffVerified || rec.Seal == nil || rec.Seal.SealID != s.Seal.ID() ||
		rec.Seal.KeyID != sealtest.KeyID {
		t.Fatalf("record: %+v", rec)
	}
	// What evidence keeps verifies again (the audit's check).
	if err := sealtest.Ring().VerifyRecord(rec); err != nil {
		t.Fatalf("recorded seal does not verify: %v", err)
	}
}

// TestForgedDecisionsAreRefused: every way a hostile caller could author
// a decision without the signed-in staff member's seal is UNAUTHORIZED,
// and a sealed decision by someone the request does not allow is
// FORBIDDEN.
func TestForgedDecisionsAreRefused(t *testing.T) {
	good := sealtest.Seal(t, "bob.compliance", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove})
	other, err := support.NewSealRing("k-other", map[string][]byte{"k-other": []byte("another key of 32 bytes or more....")})
	if err != nil {
		t.Fatal(err)
	}
	// A key under the test key's id but other material.
	impostor, _ := support.NewSealRing(sealtest.KeyID, map[string][]byte{sealtest.KeyID: []byte("not the test key, 32 bytes or more!!")})
	sealWith := func(r *support.SealRing, staff string, d support.Decision) support.SealedDecision {
		s, err := r.Seal(staff, d)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	onto := func(mod func(*support.SealedDecision)) support.SealedDecision {
		s := good
		seal := *good.Seal
		s.Seal = &seal
		mod(&s)
		return s
	}
	old := sealtest.Ring().WithClock(func() time.Time { return time.Now().Add(-support.SealMaxAge - time.Hour) })
	future := sealtest.Ring().WithClock(func() time.Time { return time.Now().Add(time.Hour) })
	cases := map[string]struct {
		d    support.SealedDecision
		code toolkit.Code
	}{
		"typed approver, no seal":    {support.SealedDecision{ApprovalID: apr, Decision: support.DecisionApprove, Approver: "carol.admin"}, toolkit.Unauthorized},
		"seal of an unknown key id":  {sealWith(other, "bob.compliance", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}), toolkit.Unauthorized},
		"seal with a wrong key":      {sealWith(impostor, "carol.admin", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}), toolkit.Unauthorized},
		"seal onto another approval": {onto(func(s *support.SealedDecision) { s.ApprovalID = "apr_fedcba9876543210" }), toolkit.Unauthorized},
		"seal onto another decision": {onto(func(s *support.SealedDecision) {
			s.Decision, s.Reason = support.DecisionReject, "not what bob decided"
		}), toolkit.Unauthorized},
		"seal onto another approver": {onto(func(s *support.SealedDecision) { s.Approver = "carol.admin" }), toolkit.Unauthorized},
		"seal with a changed reason": {onto(func(s *support.SealedDecision) { s.Reason = "added later" }), toolkit.Unauthorized},
		"seal with a changed time": {onto(func(s *support.SealedDecision) {
			s.Seal.IssuedAt = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
		}), toolkit.Unauthorized},
		"seal with a bad mac":  {onto(func(s *support.SealedDecision) { s.Seal.MAC = "00" }), toolkit.Unauthorized},
		"expired seal":         {sealWith(old, "bob.compliance", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}), toolkit.Unauthorized},
		"seal from the future": {sealWith(future, "bob.compliance", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}), toolkit.Unauthorized},
		"role not allowed":     {sealtest.Seal(t, "alice.support", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}), toolkit.Forbidden},
		"inactive staff":       {sealtest.Seal(t, "dave.former", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}), toolkit.Forbidden},
		"not on the roster":    {sealtest.Seal(t, "mallory.x", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}), toolkit.NotFound},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			rec, err := record(t, argsOf(c.d, support.RoleCompliance, support.RoleAdmin))
			if code := toolkit.CodeOf(err); code != c.code {
				t.Fatalf("got %s (%v, record %+v), want %s", code, err, rec, c.code)
			}
			if c.code == toolkit.Unauthorized && toolkit.AsError(err).RecoverySuggestion != support.SignInHint {
				t.Errorf("the refusal does not say what to do instead: %+v", toolkit.AsError(err))
			}
		})
	}
}

func TestSealRingRotation(t *testing.T) {
	k1, k2 := []byte("first seal key, 32 bytes or more....."), []byte("second seal key, 32 bytes or more....")
	before, err := support.NewSealRing("s1", map[string][]byte{"s1": k1})
	if err != nil {
		t.Fatal(err)
	}
	d := support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}
	sealed, _ := before.Seal("bob.compliance", d)
	// Rotated: s2 seals, s1 still verifies what it sealed.
	after, err := support.NewSealRing("s2", map[string][]byte{"s1": k1, "s2": k2})
	if err != nil {
		t.Fatal(err)
	}
	if err := after.Verify(sealed); err != nil {
		t.Fatalf("a seal of the retired key no longer verifies: %v", err)
	}
	if s, _ := after.Seal("bob.compliance", d); s.Seal.KeyID != "s2" {
		t.Fatalf("sealed under %s, want s2", s.Seal.KeyID)
	}
	// Dropped: refused, naming the key.
	dropped, _ := support.NewSealRing("s2", map[string][]byte{"s2": k2})
	if err := dropped.Verify(sealed); err == nil {
		t.Fatal("a seal of a dropped key verified")
	}
}

func TestParseSealRing(t *testing.T) {
	if _, err := support.ParseSealRing("", ""); err == nil {
		t.Fatal("an empty ring parsed")
	}
	if _, err := support.ParseSealRing("k1:c2hvcnQ=", ""); err == nil {
		t.Fatal("a short key parsed")
	}
	if _, err := support.ParseSealRing(sealtest.Spec(), "other"); err == nil {
		t.Fatal("a current id outside the ring parsed")
	}
	r, err := support.ParseSealRing(sealtest.Spec(), "")
	if err != nil || r.CurrentID() != sealtest.KeyID {
		t.Fatalf("ring: %v %v", r, err)
	}
}

func TestSealRefusesWhatIsNotADecision(t *testing.T) {
	r := sealtest.Ring()
	for name, c := range map[string]struct {
		staff string
		d     support.Decision
	}{
		"bad approval id":       {"bob.compliance", support.Decision{ApprovalID: "apr_x", Decision: support.DecisionApprove}},
		"bad decision":          {"bob.compliance", support.Decision{ApprovalID: apr, Decision: "maybe"}},
		"reject without reason": {"bob.compliance", support.Decision{ApprovalID: apr, Decision: support.DecisionReject}},
		"not a staff id":        {"dev-secret!", support.Decision{ApprovalID: apr, Decision: support.DecisionApprove}},
	} {
		if _, err := r.Seal(c.staff, c.d); err == nil {
			t.Errorf("%s: sealed", name)
		}
	}
}
