package wiring

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/worker"
)

// Roles say what one worker process does. Any number of processes share
// the task queue; a deployment may run workflow workers and activity
// workers apart, serve the Stripe webhook from some of them, and let one
// ensure the schedules.
type Roles struct {
	// Workflows polls workflow tasks (and runs local activities).
	Workflows bool
	// Activities polls activity tasks.
	Activities bool
	// Webhook serves the Stripe webhook receiver.
	Webhook bool
	// Schedules ensures the reconcile and archive schedules at start.
	Schedules bool
	// Codec serves the codec server (CARTWRIGHT_CODEC_ADDR) for the Web UI
	// and the CLI.
	Codec bool
}

// AllRoles is a worker that does everything (the default).
var AllRoles = Roles{Workflows: true, Activities: true, Webhook: true, Schedules: true, Codec: true}

// ParseRoles reads a comma-separated role list (CARTWRIGHT_WORKER_ROLES).
func ParseRoles(list string) (Roles, error) {
	var r Roles
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "workflows":
			r.Workflows = true
		case "activities":
			r.Activities = true
		case "webhook":
			r.Webhook = true
		case "schedules":
			r.Schedules = true
		case "codec":
			r.Codec = true
		case "":
		default:
			return Roles{}, fmt.Errorf("CARTWRIGHT_WORKER_ROLES: unknown role %q (want workflows, activities, webhook, schedules, codec)", name)
		}
	}
	if r == (Roles{}) {
		return Roles{}, fmt.Errorf("CARTWRIGHT_WORKER_ROLES is empty: a worker must take at least one role")
	}
	return r, nil
}

// Polls reports whether the process polls the task queue at all.
func (r Roles) Polls() bool { return r.Workflows || r.Activities }

// WorkerOptions turns off the pollers of the roles the process does not
// take.
func (r Roles) WorkerOptions(base worker.Options) worker.Options {
	base.DisableWorkflowWorker = !r.Workflows
	base.LocalActivityWorkerOnly = r.Workflows && !r.Activities
	return base
}
