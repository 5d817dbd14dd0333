package main

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/support"
	"github.com/cartwright-dev/cartwright/workflows"
)

// registerDraftOrder registers the support tools, the DraftOrder workflow
// and the approval activity. It runs after registerCommerce, so the
// registry already holds the commerce tools whose specs the workflow's
// activity options are derived from.
func registerDraftOrder(w worker.Worker, d *Deps) error {
	if err := support.RegisterTools(d.Registry, d.Pool); err != nil {
		return err
	}
	workflows.UseToolSpecs(d.Registry.Specs()...)
	w.RegisterWorkflowWithOptions(workflows.DraftOrder, workflow.RegisterOptions{Name: workflows.DraftOrderWorkflowName})
	w.RegisterActivity(&activities.Approval{Invoker: d.Invoker})
	return nil
}
