package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The search attributes every cartwright workflow keeps current, so support
// staff can filter in the Web UI (e.g. `AwaitingApproval = true`). They hold
// flow and state names only, never user data. The dev server registers them
// (scripts/lib.sh SEARCH_ATTRIBUTES); a production namespace needs
// `temporal operator search-attribute create` once.
var (
	// SearchFlow names the workflow's flow, e.g. "draft_order".
	SearchFlow = temporal.NewSearchAttributeKeyKeyword("CartwrightFlow")
	// SearchState is the flow's current state, e.g. NEEDS_USER_CONFIRMATION.
	SearchState = temporal.NewSearchAttributeKeyKeyword("CartwrightState")
	// SearchAwaitingApproval is true while a support-staff decision is due.
	SearchAwaitingApproval = temporal.NewSearchAttributeKeyBool("AwaitingApproval")
)

// Flow names, the values of CartwrightFlow.
const (
	FlowDraftOrder = "draft_order"
	// FlowOrderSettle: a written draft order's stock hold and payment
	// (draftorder.Flow.Settle).
	FlowOrderSettle = "order_settle"
	FlowOnboarding  = "onboarding"
	FlowToolCall    = "tool_call"
	// FlowFXRates: the scheduled exchange-rate reads (maintenance.FetchFXRates).
	FlowFXRates = "fx_rates"
)

// StartSearchAttributes are the attributes to pass in StartWorkflowOptions,
// so a workflow is findable by flow from its very first event.
func StartSearchAttributes(flow, state string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(
		SearchFlow.ValueSet(flow),
		SearchState.ValueSet(state),
		SearchAwaitingApproval.ValueSet(false),
	)
}

// UpsertFlowState sets flow and state; it skips the command when nothing
// changed, which keeps the history short on loops that revisit a state.
func UpsertFlowState(ctx workflow.Context, flow, state string) error {
	current := workflow.GetTypedSearchAttributes(ctx)
	f, _ := current.GetKeyword(SearchFlow)
	s, _ := current.GetKeyword(SearchState)
	if f == flow && s == state {
		return nil
	}
	return workflow.UpsertTypedSearchAttributes(ctx, SearchFlow.ValueSet(flow), SearchState.ValueSet(state))
}

// UpsertAwaitingApproval sets AwaitingApproval when it changes.
func UpsertAwaitingApproval(ctx workflow.Context, awaiting bool) error {
	current := workflow.GetTypedSearchAttributes(ctx)
	if v, ok := current.GetBool(SearchAwaitingApproval); ok && v == awaiting {
		return nil
	}
	return workflow.UpsertTypedSearchAttributes(ctx, SearchAwaitingApproval.ValueSet(awaiting))
}
