package schedules

import (
	"cmp"
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// ReconcileScheduleID is the one reconcile schedule of a namespace.
const ReconcileScheduleID = "cartwright-reconcile"

// ReconcileSchedule describes the reconcile schedule a worker ensures.
type ReconcileSchedule struct {
	ID        string        // default ReconcileScheduleID
	TaskQueue string        // where the Reconcile workflow runs
	Every     time.Duration // interval between passes
	// Input is passed to every run; ClosedWithin defaults to 2×Every so
	// consecutive passes overlap and no completed workflow is skipped.
	Input maintenance.ReconcileInput
}

// pass is the schedule: a slow pass is never run twice at once; a missed
// one is not caught up.
func (s ReconcileSchedule) pass() everyPass {
	if s.Input.ClosedWithin <= 0 {
		s.Input.ClosedWithin = 2 * s.Every
	}
	return everyPass{id: cmp.Or(s.ID, ReconcileScheduleID), workflow: maintenance.ReconcileWorkflowName, taskQueue: s.TaskQueue, input: s.Input,
		every: s.Every, timeout: s.Every + 10*time.Minute,
		note: "cartwright reconcile: stale audits, audit/evidence invariants (created by the worker)"}
}

// EnsureReconcileSchedule creates the schedule, or — when another worker
// already did (ErrScheduleAlreadyRunning is success) — brings its interval,
// task queue and input in line with this worker's configuration. Safe to
// call from every worker at every start.
func EnsureReconcileSchedule(ctx context.Context, c client.Client, s ReconcileSchedule) error {
	return ensureEvery(ctx, c, "reconcile", s.pass())
}
