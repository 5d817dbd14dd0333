// Package schedules ensures cartwright's Temporal schedules (reconcile,
// history archive). It is client-side code a worker runs at start, not
// workflow code, so it lives beside the client rather than in workflows/;
// it takes the workflows' names and inputs from there.
package schedules

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ensureSchedule creates the schedule of opts, or — when another worker
// already did (ErrScheduleAlreadyRunning is success) — brings its spec,
// action, overlap policy and catch-up window in line with opts.
func ensureSchedule(ctx context.Context, c client.Client, opts client.ScheduleOptions) error {
	_, err := c.ScheduleClient().Create(ctx, opts)
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("create schedule %s: %w", opts.ID, err)
	}
	err = c.ScheduleClient().GetHandle(ctx, opts.ID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			sched := in.Description.Schedule
			spec := opts.Spec
			sched.Spec, sched.Action = &spec, opts.Action
			if sched.Policy == nil {
				sched.Policy = &client.SchedulePolicies{}
			}
			sched.Policy.Overlap, sched.Policy.CatchupWindow = opts.Overlap, opts.CatchupWindow
			return &client.ScheduleUpdate{Schedule: &sched}, nil
		},
	})
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", opts.ID, err)
	}
	return nil
}

// everyPass is one of our schedules: a workflow run every interval on a
// task queue, never two passes at once, a missed pass not caught up.
type everyPass struct {
	id, workflow, taskQueue, note string
	every, timeout                time.Duration
	input                         any
}

func (p everyPass) options() client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:   p.id,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: p.every}}},
		Action: &client.ScheduleWorkflowAction{
			ID: p.id, Workflow: p.workflow, Args: []any{p.input}, TaskQueue: p.taskQueue,
			WorkflowExecutionTimeout: p.timeout,
		},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: time.Minute,
		Note:          p.note,
	}
}

// ensureEvery checks the interval and queue, then ensures the schedule.
func ensureEvery(ctx context.Context, c client.Client, what string, p everyPass) error {
	if p.every < time.Minute || p.taskQueue == "" {
		return fmt.Errorf("%s schedule: interval %s (at least 1m) and a task queue are required", what, p.every)
	}
	return ensureSchedule(ctx, c, p.options())
}
