package draftorder

import (
	"regexp"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/commerce"
	"github.com/cartwright-dev/cartwright/workflows"
)

// startSettle hands a written draft order to its settle run
// (DraftOrderSettle, docs/stock.md): an abandoned child, so the draft
// order's run still ends DRAFT_CREATED at once while the settle run holds
// the stock for as long as the hold lasts. The draft order waits only for
// the child to start. A dry run wrote nothing and starts nothing.
func (d *draftOrder) startSettle(ctx workflow.Context) error {
	if d.draft == nil || d.draft.DraftOrderID == "" || d.draft.Status == commerce.DraftStatusValidated {
		return nil
	}
	id := commerce.SettleWorkflowID(workflow.GetInfo(ctx).WorkflowExecution.ID)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: workflows.StartSearchAttributes(workflows.FlowOrderSettle, StateHolding),
		StaticSummary:         "stock hold of draft order " + d.draft.DraftOrderID,
	})
	f := workflow.ExecuteChildWorkflow(cctx, SettleWorkflowName, SettleInput{Request: d.in.Request, DraftOrder: *d.draft,
		MerchantID: d.in.MerchantID, PollEvery: d.in.PaymentPollEvery})
	err := f.GetChildWorkflowExecution().Get(ctx, nil)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return nil
	}
	return err
}

// merchantIDPattern is merchants.merchant_id's check (migration 00020).
var merchantIDPattern = regexp.MustCompile(`^m_[a-z0-9_]{3,60}$`)
