package wiring

import (
	"testing"
	"testing/fstest"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// registrations records what RegisterRoles put on a worker.
type registrations struct {
	worker.Registry
	workflows  int
	activities []any
}

func (r *registrations) RegisterWorkflowWithOptions(any, workflow.RegisterOptions) { r.workflows++ }
func (r *registrations) RegisterActivity(a any)                                    { r.activities = append(r.activities, a) }
func (r *registrations) RegisterActivityWithOptions(a any, _ activity.RegisterOptions) {
	r.activities = append(r.activities, a)
}

// A workflow-only worker runs the read-only tools as local activities: it
// must hold the tool activity (a nil receiver would panic on the first
// quote), and nothing else of the activities role.
func TestWorkflowWorkerRegistersTheLocalToolActivity(t *testing.T) {
	d := &Deps{Base: Base{Logger: zap.NewNop()}, Registry: toolkit.NewRegistry(fstest.MapFS{})}
	d.Invoker = toolkit.NewInvoker(d.Registry, nil, nil)
	for _, tc := range []struct {
		roles     Roles
		wantTools bool
		wantAll   bool
	}{
		{Roles{Workflows: true}, true, false},
		{Roles{Activities: true}, true, true},
		{AllRoles, true, true},
		{Roles{Webhook: true}, false, false},
	} {
		var r registrations
		d.RegisterRoles(&r, tc.roles)
		tools := 0
		for _, a := range r.activities {
			if ta, ok := a.(*activities.Tools); ok && ta.Invoker == d.Invoker {
				tools++
			}
		}
		if (tools == 1) != tc.wantTools || (len(r.activities) > 1) != tc.wantAll {
			t.Errorf("%+v: %d activities, %d tool activities", tc.roles, len(r.activities), tools)
		}
		if (r.workflows > 0) != tc.roles.Workflows {
			t.Errorf("%+v: %d workflows registered", tc.roles, r.workflows)
		}
	}
}
