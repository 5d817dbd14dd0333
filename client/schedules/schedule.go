// Package schedules ensures cartwright's Temporal schedules (reconcile,
// history archive). It is client-side code a worker runs at start, not
// workflow code, so it lives beside the client rather than in workflows/;
// it takes the workflows' names and inputs from there.
package schedules

import (
	"context"
	"errors"
	"fmt"

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
