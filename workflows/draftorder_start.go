package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// DraftOrderStartOptions are the options every caller starts a draft order
// with. The id is DraftOrderID(user, key); a second start while the run is
// open attaches to it (USE_EXISTING), and a start after it closed is
// refused (REJECT_DUPLICATE, the caller then reads the closed run's
// result), so one idempotency key never yields two runs or two drafts.
func DraftOrderStartOptions(taskQueue, userID, idempotencyKey string) (client.StartWorkflowOptions, error) {
	id, err := DraftOrderID(userID, idempotencyKey)
	if err != nil {
		return client.StartWorkflowOptions{}, err
	}
	return onceStartOptions(id, taskQueue, FlowDraftOrder, StateQuoting, "draft order"), nil
}

// onceStartOptions start the run of id at most once: a second start while
// it is open attaches to it (USE_EXISTING), and a start after it closed is
// refused (REJECT_DUPLICATE). The run starts searchable by its flow and
// first state.
func onceStartOptions(id, taskQueue, flow, state, summary string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes:    StartSearchAttributes(flow, state),
		StaticSummary:            summary,
	}
}
