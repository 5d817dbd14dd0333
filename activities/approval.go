package activities

import (
	"context"

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
func (a *Approval) RecordApproval(ctx context.Context, in RecordApprovalInput) (RecordApprovalResult, error) {
	rec, env, err := legacy[support.ApprovalRecord](ctx, a.Invoker, support.RecordApprovalTool, in.Request, in.Args)
	return RecordApprovalResult{Record: rec, Envelope: env}, err
}
