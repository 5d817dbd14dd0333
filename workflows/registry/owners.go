package registry

import (
	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
)

// StepOwners names every tool that is a step of a flow and the workflow
// types whose runs may call it (docs/quote-seals.md#who-may-call-a-step):
// the draft order's origin choice, total and write are its own; a
// support-staff decision is recorded only by the flows that wait for one
// (workflows/approval). No other run — a ToolCall, a workflow type this
// service does not register — reaches them.
func StepOwners() map[string][]string {
	draft := []string{draftorder.WorkflowName}
	return map[string][]string{
		commerce.ToolChooseOrigins:    draft,
		commerce.ToolComputeTotal:     draft,
		commerce.ToolCreateDraftOrder: draft,
		support.RecordApprovalTool:    {draftorder.WorkflowName, onboardingflow.WorkflowName, draftorder.RefundWorkflowName},
		// The written draft's stock and payment are its own run's (the
		// hold, docs/stock.md); a refund is the refund run's (docs/backend.md).
		commerce.ToolSettleStock:   draft,
		commerce.ToolCreatePayment: draft,
		commerce.ToolCancelPayment: draft,
		commerce.ToolRefundPayment: {draftorder.RefundWorkflowName},
		// Returned goods go back on hand only by the refund that refunded
		// them (docs/stock.md#returns).
		commerce.ToolRestockReturned: {draftorder.RefundWorkflowName},
	}
}

// Callers is the caller policy of a worker serving Registry: only its
// workflow types call tools, and StepOwners' steps only from their owners.
func Callers(specs []toolkit.Spec) *toolkit.Callers {
	flows := make([]string, 0, 8)
	for name := range Registry(specs) {
		flows = append(flows, name)
	}
	return toolkit.NewCallers(flows, StepOwners())
}
