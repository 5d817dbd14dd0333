package activities_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/evidence/evidencetest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
	"github.com/cartwright-dev/cartwright/schemas"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/support/sealtest"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// approvalEnv runs the tool activity against a fresh database holding the
// staff roster of migration 00005 and a real evidence store.
func approvalEnv(t *testing.T) (*testsuite.TestActivityEnvironment, *evidence.Store) {
	t.Helper()
	pool := testenv.Postgres(t)
	store, _ := evidencetest.Store(t, pool, nil)
	reg := toolkit.NewRegistry(schemas.FS)
	if err := support.RegisterTools(reg, pool, sealtest.Ring()); err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(&activities.Tools{Invoker: toolkit.NewInvoker(reg, store, zap.NewNop())})
	return env, store
}

// recordInput is one support.record_approval call: the request envelope
// (actor = the approver) and the decision to check and record.
type recordInput struct {
	Request toolkit.Request
	Args    support.RecordApprovalArgs
}

// record calls support.record_approval through the tool activity; a
// refusal is the error of its code.
func record(t *testing.T, env *testsuite.TestActivityEnvironment, in recordInput) (support.ApprovalRecord, toolkit.Response, error) {
	t.Helper()
	var rec support.ApprovalRecord
	raw, err := json.Marshal(in.Args)
	if err != nil {
		t.Fatal(err)
	}
	val, err := env.ExecuteActivity("CallTool", activities.CallToolInput{Call: toolkit.ToolCall{Tool: support.RecordApprovalTool, Request: in.Request, Input: raw}})
	if err != nil {
		return rec, toolkit.Response{}, err
	}
	var res activities.CallToolResult
	if err := val.Get(&res); err != nil {
		t.Fatal(err)
	}
	if !res.Envelope.OK {
		return rec, res.Envelope, res.Envelope.Error
	}
	if err := res.Envelope.Decode(&rec); err != nil {
		t.Fatal(err)
	}
	return rec, res.Envelope, nil
}

// approvalInput is approver's decision as the workflow passes it: sealed by
// the codec server for approver, when it is a decision it would seal.
func approvalInput(decision, approver, reason string) recordInput {
	in := unsealedInput(decision, approver, reason)
	if d, err := sealtest.As(approver).SealDecision(context.Background(),
		support.Decision{ApprovalID: in.Args.ApprovalID, Decision: decision, Reason: reason}); err == nil {
		in.Args.Seal = d.Seal
	}
	return in
}

// unsealedInput names approver without a seal: a raw signal.
func unsealedInput(decision, approver, reason string) recordInput {
	return recordInput{
		Request: toolkit.Request{
			RequestID: "req-approval-test", UserID: "u_123", IdempotencyKey: "approval:apr_0123456789abcdef:1",
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
	rec, envelope, err := record(t, env, approvalInput("approve", "alice.support", "battery is packed in equipment"))
	if err != nil {
		t.Fatalf("record_approval: %v", err)
	}
	want := support.ApprovalRecord{
		Flow: "draft_order", Subject: "compliance review", ApprovalID: "apr_0123456789abcdef", Decision: "approve",
		Approver: "alice.support", ApproverRole: "support", Reason: "battery is packed in equipment", StaffVerified: true,
	}
	got := rec
	seal := got.Seal
	got.Seal = nil
	if got != want || seal == nil || !strings.HasPrefix(seal.SealID, "seal_") || sealtest.Ring().VerifyRecord(rec) != nil {
		t.Fatalf("record = %+v (seal %+v), want %+v with a verified seal", rec, seal, want)
	}
	id := envelope.SnapshotID()
	if id == "" {
		t.Fatal("no evidence snapshot in the envelope")
	}
	snap, err := store.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("read snapshot %s: %v", id, err)
	}
	hash, err := toolkit.CanonicalHash(envelope.Data)
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
		in   recordInput
		want toolkit.Code
	}{
		{"unknown approver", approvalInput("approve", "mallory.nobody", ""), toolkit.NotFound},
		{"active staff, typed, unsealed", unsealedInput("approve", "carol.admin", ""), toolkit.Unauthorized},
		{"inactive approver", approvalInput("approve", "dave.former", ""), toolkit.Forbidden},
		{"rejection without reason", approvalInput("reject", "bob.compliance", ""), toolkit.InvalidArgument},
		{"malformed approval id", func() recordInput {
			in := approvalInput("approve", "bob.compliance", "")
			in.Args.ApprovalID = "apr_XYZ"
			return in
		}(), toolkit.InvalidArgument},
		{"role not allowed", func() recordInput {
			in := approvalInput("approve", "alice.support", "")
			in.Args.AllowedRoles = []string{support.RoleCompliance, support.RoleAdmin}
			return in
		}(), toolkit.Forbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := record(t, env, c.in)
			if got := toolkit.CodeOf(err); got != c.want {
				t.Fatalf("code = %s (%v), want %s", got, err, c.want)
			}
		})
	}
}
