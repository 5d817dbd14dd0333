package schedules

import (
	"cmp"
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/workflows/maintenance"
)

// ArchiveScheduleID is the one archive schedule of a namespace.
const ArchiveScheduleID = "cartwright-archive-histories"

// ArchiveSchedule describes the archive schedule a worker ensures.
type ArchiveSchedule struct {
	ID        string        // default ArchiveScheduleID
	TaskQueue string        // where ArchiveHistories runs
	Every     time.Duration // interval between passes, at least a minute
	Input     maintenance.ArchiveHistoriesInput
}

// pass is the schedule: passes never overlap; a missed one needs no
// catch-up, since the next pass starts from the watermark whenever it runs.
func (s ArchiveSchedule) pass() everyPass {
	return everyPass{id: cmp.Or(s.ID, ArchiveScheduleID), workflow: maintenance.ArchiveHistoriesWorkflowName, taskQueue: s.TaskQueue, input: s.Input,
		every: s.Every, timeout: s.Every + 30*time.Minute,
		note: "cartwright history archive: copies closed histories into PostgreSQL (created by the worker)"}
}

// EnsureArchiveSchedule creates the schedule, or brings an existing one
// (another worker created it) in line with this configuration. Safe to call
// from every worker at every start.
func EnsureArchiveSchedule(ctx context.Context, c client.Client, s ArchiveSchedule) error {
	return ensureEvery(ctx, c, "archive", s.pass())
}
