package main

import (
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/support"
)

// registerDraftOrder registers the support tools and the approval activity
// the DraftOrder workflow (registered with every workflow in main) uses.
func registerDraftOrder(w worker.Worker, d *Deps) error {
	if err := support.RegisterTools(d.Registry, d.Pool); err != nil {
		return err
	}
	w.RegisterActivity(&activities.Approval{Invoker: d.Invoker})
	return nil
}
