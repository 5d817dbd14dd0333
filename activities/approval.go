package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Approval runs the support-staff tools. It holds only the invoker: the
// roster is read by the registered tool, so every decision goes through the
// same pipeline (schema check, evidence snapshot) as any other tool call.
type Approval struct {
	Invoker *toolkit.Invoker
}

// RecordApprovalInput is the input of Approval.RecordApproval: the request
// envelope (actor = the approver) and the decision to check and record.
type RecordApprovalInput struct {
	Request toolkit.Request            `json:"request"`
	Args    support.RecordApprovalArgs `json:"args"`
}

// RecordApprovalResult is the recorded decision and the envelope whose
// evidence snapshot holds it.
type RecordApprovalResult struct {
	Record   support.ApprovalRecord `json:"record"`
	Envelope toolkit.Response       `json:"envelope"`
}

// RecordApproval checks the approver against the staff roster and records
// the decision as evidence (tool support.record_approval). An unknown
// approver fails with NOT_FOUND, an inactive one with FORBIDDEN; neither is
// retried.
//
// Runs that schedule this activity were recorded while the tool was a read
// and send no idempotency key; the tool is a write now and the invoker wants
// one (docs/approvals.md#recording-a-decision). The key is the activity's
// own, the same on each of its retries, as the workflow's keyed call has one
// per attempt.
func (a *Approval) RecordApproval(ctx context.Context, in RecordApprovalInput) (RecordApprovalResult, error) {
	if in.Request.IdempotencyKey == "" {
		info := activity.GetInfo(ctx)
		in.Request.IdempotencyKey = "approval:" + info.WorkflowExecution.RunID + ":" + info.ActivityID
	}
	rec, env, err := legacy[support.ApprovalRecord](ctx, a.Invoker, support.RecordApprovalTool, in.Request, in.Args)
	return RecordApprovalResult{Record: rec, Envelope: env}, err
}
