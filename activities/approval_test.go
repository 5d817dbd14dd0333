package activities_test

import (
	"testing"

	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// approvalEnv runs activities.Approval against a fresh database holding the
// staff roster of migration 00005 and a real evidence store.
func approvalEnv(t *testing.T) (*testsuite.TestActivityEnvironment, *evidence.Store) {
	t.Helper()
	pool := testenv.Postgres(t)
	store, _ := evidencetest.Store(t, pool, nil)
	reg := toolkit.NewRegistry(schemas.FS)
	if err := support.RegisterTools(reg, pool); err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.Approval{Invoker: toolkit.NewInvoker(reg, store, zap.NewNop())})
	return env, store
}

func approvalInput(decision, approver, reason string) activities.RecordApprovalInput {
	return activities.RecordApprovalInput{
		Request: toolkit.Request{
			RequestID: "req-approval-test", UserID: "u_123",
			Actor: toolkit.Actor{Type: toolkit.ActorUser, ID: approver},
		},
		Args: support.RecordApprovalArgs{
			Flow: "draft_order", Subject: "compliance review", ApprovalID: "apr_0123456789abcdef",
			Decision: decision, Approver: approver, Reason: reason,
		},
	}
}

func TestRecordApprovalActiveStaffLeavesEvidence(t *testing.T) {
	env, store := approvalEnv(t)
	val, err := env.ExecuteActivity("RecordApproval", approvalInput("approve", "alice.support", "battery is packed in equipment"))
	if err != nil {
		t.Fatalf("RecordApproval: %v", err)
	}
	var res activities.RecordApprovalResult
	if err := val.Get(&res); err != nil {
		t.Fatal(err)
	}
	want := support.ApprovalRecord{
		Flow: "draft_order", Subject: "compliance review", ApprovalID: "apr_0123456789abcdef", Decision: "approve",
		Approver: "alice.support", ApproverRole: "support", Reason: "battery is packed in equipment", StaffVerified: true,
	}
	if res.Record != want {
		t.Fatalf("record = %+v, want %+v", res.Record, want)
	}
	id := res.Envelope.SnapshotID()
	if id == "" {
		t.Fatal("no evidence snapshot in the envelope")
	}
	snap, err := store.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("read snapshot %s: %v", id, err)
	}
	hash, err := toolkit.CanonicalHash(res.Envelope.Data)
	if err != nil {
		t.Fatal(err)
	}
	if snap.OutputHash != hash || snap.Tool != support.RecordApprovalTool {
		t.Fatalf("snapshot %s: tool %s hash %s, want %s hash %s", id, snap.Tool, snap.OutputHash, support.RecordApprovalTool, hash)
	}
}

func TestRecordApprovalRefusesWhoMayNotDecide(t *testing.T) {
	env, _ := approvalEnv(t)
	cases := []struct {
		name string
		in   activities.RecordApprovalInput
		want toolkit.Code
	}{
		{"unknown approver", approvalInput("approve", "mallory.nobody", ""), toolkit.NotFound},
		{"inactive approver", approvalInput("approve", "dave.former", ""), toolkit.Forbidden},
		{"rejection without reason", approvalInput("reject", "bob.compliance", ""), toolkit.InvalidArgument},
		{"malformed approval id", func() activities.RecordApprovalInput {
			in := approvalInput("approve", "bob.compliance", "")
			in.Args.ApprovalID = "apr_XYZ"
			return in
		}(), toolkit.InvalidArgument},
		{"role not allowed", func() activities.RecordApprovalInput {
			in := approvalInput("approve", "alice.support", "")
			in.Args.AllowedRoles = []string{support.RoleCompliance, support.RoleAdmin}
			return in
		}(), toolkit.Forbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := env.ExecuteActivity("RecordApproval", c.in)
			if got := toolkit.CodeOf(err); got != c.want {
				t.Fatalf("code = %s (%v), want %s", got, err, c.want)
			}
		})
	}
}
