package workflows

import "go.temporal.io/sdk/workflow"

// Registry returns every workflow the worker serves, by registered type
// name. The auditor replays histories with exactly these functions, so a
// workflow missing here cannot be audited: add each new workflow (and
// register it on the worker under the same name, e.g. with Register).
func Registry() map[string]any {
	return map[string]any{
		DraftOrderWorkflowName:       DraftOrder,
		OnboardingWorkflowName:       Onboarding,
		ReconcileWorkflowName:        Reconcile,
		ArchiveHistoriesWorkflowName: ArchiveHistories,
		ToolCallWorkflowName:         ToolCall,
		ListToolsWorkflowName:        ListTools,
	}
}

// WorkflowRegistrar is what both worker.Worker and worker.WorkflowReplayer
// offer for registering a workflow under a name.
type WorkflowRegistrar interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}

// Register registers every workflow of Registry on r under its name, so the
// worker and the auditor's replayer can never disagree on a name.
func Register(r WorkflowRegistrar) {
	for name, fn := range Registry() {
		r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
	}
}
