package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// bound are the workflows that call tools, bound to the specs of those
// tools (their activity options come from the specs).
type bound struct{ specs toolSpecs }

// Registry returns every workflow the worker serves, by registered type
// name, bound to specs (normally the worker registry's Specs()). The
// auditor replays histories with exactly these functions, so a workflow
// missing here cannot be audited: add each new workflow here.
func Registry(specs []toolkit.Spec) map[string]any {
	b := bound{specs: newToolSpecs(specs)}
	return map[string]any{
		DraftOrderWorkflowName:       b.DraftOrder,
		OnboardingWorkflowName:       b.Onboarding,
		ReconcileWorkflowName:        Reconcile,
		ArchiveHistoriesWorkflowName: ArchiveHistories,
		ToolCallWorkflowName:         b.ToolCall,
		ListToolsWorkflowName:        ListTools,
		FetchFXRatesWorkflowName:     FetchFXRates,
	}
}

// WorkflowRegistrar is what both worker.Worker and worker.WorkflowReplayer
// offer for registering a workflow under a name.
type WorkflowRegistrar interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}

// Register registers every workflow of Registry(specs) on r under its
// name, so the worker and the auditor's replayer can never disagree on a
// name.
func Register(r WorkflowRegistrar, specs []toolkit.Spec) {
	for name, fn := range Registry(specs) {
		r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
	}
}
