package wiring

import (
	"testing"

	"go.temporal.io/sdk/worker"
)

func TestParseRoles(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Roles
		bad  bool
	}{
		{in: "workflows,activities,webhook,schedules,codec", want: AllRoles},
		{in: "codec", want: Roles{Codec: true}},
		{in: "activities", want: Roles{Activities: true}},
		{in: " workflows , schedules ", want: Roles{Workflows: true, Schedules: true}},
		{in: "webhook", want: Roles{Webhook: true}},
		{in: "", bad: true},
		{in: "workflows,bogus", bad: true},
	} {
		got, err := ParseRoles(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseRoles(%q) = %+v, %v", tc.in, got, err)
		}
	}
	o := Roles{Workflows: true}.WorkerOptions(workerOptions())
	if o.DisableWorkflowWorker || !o.LocalActivityWorkerOnly {
		t.Errorf("workflows only: %+v", o)
	}
	o = Roles{Activities: true}.WorkerOptions(workerOptions())
	if !o.DisableWorkflowWorker || o.LocalActivityWorkerOnly {
		t.Errorf("activities only: %+v", o)
	}
	if o = AllRoles.WorkerOptions(workerOptions()); o.DisableWorkflowWorker || o.LocalActivityWorkerOnly {
		t.Errorf("all roles: %+v", o)
	}
}

func workerOptions() worker.Options { return worker.Options{} }
