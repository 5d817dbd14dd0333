package schedules

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/workflows"
)

// ArchiveScheduleID is the one archive schedule of a namespace.
const ArchiveScheduleID = "cartwright-archive-histories"

// ArchiveSchedule describes the archive schedule a worker ensures.
type ArchiveSchedule struct {
	ID        string        // default ArchiveScheduleID
	TaskQueue string        // where ArchiveHistories runs
	Every     time.Duration // interval between passes, at least a minute
	Input     workflows.ArchiveHistoriesInput
}

func (s ArchiveSchedule) options() client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:   s.ID,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.Every}}},
		Action: &client.ScheduleWorkflowAction{
			ID: s.ID, Workflow: workflows.ArchiveHistoriesWorkflowName, Args: []any{s.Input}, TaskQueue: s.TaskQueue,
			WorkflowExecutionTimeout: s.Every + 30*time.Minute,
		},
		// Passes never overlap; a missed one needs no catch-up, since the
		// next pass starts from the watermark whenever it runs.
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: time.Minute,
		Note:          "cartwright history archive: copies closed histories into PostgreSQL (created by the worker)",
	}
}

// EnsureArchiveSchedule creates the schedule, or brings an existing one
// (another worker created it) in line with this configuration. Safe to call
// from every worker at every start.
func EnsureArchiveSchedule(ctx context.Context, c client.Client, s ArchiveSchedule) error {
	if s.ID == "" {
		s.ID = ArchiveScheduleID
	}
	if s.Every < time.Minute || s.TaskQueue == "" {
		return fmt.Errorf("archive schedule: interval %s (at least 1m) and a task queue are required", s.Every)
	}
	return ensureSchedule(ctx, c, s.options())
}
