package registry

import (
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows/draftorder"
	"github.com/cartwright-dev/cartwright/workflows/internal/flow"
	"github.com/cartwright-dev/cartwright/workflows/maintenance"
	"github.com/cartwright-dev/cartwright/workflows/onboardingflow"
	"github.com/cartwright-dev/cartwright/workflows/toolcall"
)

// Registry returns every workflow the worker serves, by registered type
// name, bound to specs (normally the worker registry's Specs()). The
// auditor replays histories with exactly these functions, so a workflow
// missing here cannot be audited: add each new workflow here.
func Registry(specs []toolkit.Spec) map[string]any {
	s := flow.NewToolSpecs(specs)
	return map[string]any{
		draftorder.WorkflowName:                  draftorder.Flow{Specs: s}.Run,
		onboardingflow.WorkflowName:              onboardingflow.Flow{Specs: s}.Run,
		draftorder.RefundWorkflowName:            draftorder.Flow{Specs: s}.Refund,
		maintenance.ReconcileWorkflowName:        maintenance.Reconcile,
		maintenance.ArchiveHistoriesWorkflowName: maintenance.ArchiveHistories,
		toolcall.WorkflowName:                    toolcall.Flow{Specs: s}.Run,
		toolcall.ListToolsWorkflowName:           toolcall.ListTools,
		maintenance.FetchFXRatesWorkflowName:     maintenance.FetchFXRates,
		maintenance.RatesInUseWorkflowName:       maintenance.RatesInUse,
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
