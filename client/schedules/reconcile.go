package schedules

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/workflows"
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
	Input workflows.ReconcileInput
}

func (s ReconcileSchedule) options() client.ScheduleOptions {
	if s.Input.ClosedWithin <= 0 {
		s.Input.ClosedWithin = 2 * s.Every
	}
	return client.ScheduleOptions{
		ID:   s.ID,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.Every}}},
		Action: &client.ScheduleWorkflowAction{
			ID: s.ID, Workflow: workflows.ReconcileWorkflowName, Args: []any{s.Input}, TaskQueue: s.TaskQueue,
			WorkflowExecutionTimeout: s.Every + 10*time.Minute,
		},
		// A slow pass is never run twice at once; a missed one is not caught up.
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: time.Minute,
		Note:          "cartwright reconcile: stale audits, audit/evidence invariants (created by the worker)",
	}
}

// EnsureReconcileSchedule creates the schedule, or — when another worker
// already did (ErrScheduleAlreadyRunning is success) — brings its interval,
// task queue and input in line with this worker's configuration. Safe to
// call from every worker at every start.
func EnsureReconcileSchedule(ctx context.Context, c client.Client, s ReconcileSchedule) error {
	if s.ID == "" {
		s.ID = ReconcileScheduleID
	}
	if s.Every < time.Minute || s.TaskQueue == "" {
		return fmt.Errorf("reconcile schedule: interval %s (at least 1m) and a task queue are required", s.Every)
	}
	return ensureSchedule(ctx, c, s.options())
}
