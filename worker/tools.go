package main

import (
	"go.temporal.io/sdk/worker"

	"github.com/cartwright-dev/cartwright/activities"
)

// registerTools serves the generic ToolCall and ListTools workflows' activity:
// any registered tool, by name, through the same invoker.
func registerTools(w worker.Worker, d *Deps) error {
	w.RegisterActivity(&activities.Tools{Invoker: d.Invoker})
	return nil
}
