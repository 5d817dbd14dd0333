package support_test

import (
	"testing"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// TestProviderGroupsDecideTheRole: a seal carrying the groups the
// provider signed decides by them, not by the roster (the member need not
// be on it): outside compliance refused FORBIDDEN, inside allowed; the
// groups are under the MAC, so adding one to a sealed decision breaks it.
func TestProviderGroupsDecideTheRole(t *testing.T) {
	d := support.Decision{ApprovalID: apr, Decision: support.DecisionApprove, Reason: "datasheet checked"}
	outside, err := sealtest.Ring().SealWithGroups("nico.newcomer", []string{"support"}, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := record(t, argsOf(outside, support.RoleCompliance, support.RoleAdmin)); toolkit.CodeOf(err) != toolkit.Forbidden {
		t.Fatalf("a support member deciding a compliance review: %v, want FORBIDDEN", err)
	}
	forged := outside
	seal := *outside.Seal
	seal.Groups = []string{"support", "compliance"}
	forged.Seal = &seal
	if _, err := record(t, argsOf(forged, support.RoleCompliance)); toolkit.CodeOf(err) != toolkit.Unauthorized {
		t.Fatalf("groups added to a sealed decision: %v, want UNAUTHORIZED", err)
	}
	inside, err := sealtest.Ring().SealWithGroups("nico.newcomer", []string{"support", "compliance"}, d)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := record(t, argsOf(inside, support.RoleCompliance, support.RoleAdmin))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Approver != "nico.newcomer" || rec.ApproverRole != support.RoleCompliance || len(rec.Seal.Groups) != 2 {
		t.Fatalf("record: %+v", rec)
	}
	if err := sealtest.Ring().VerifyRecord(rec); err != nil {
		t.Fatalf("the recorded seal does not verify: %v", err)
	}
	if _, err := sealtest.Ring().SealWithGroups("nico.newcomer", []string{"Not A Group"}, d); err == nil {
		t.Fatal("a group name that is not one sealed")
	}
}
