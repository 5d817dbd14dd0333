package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/cartwright-dev/cartwright/activities/history"
	"github.com/cartwright-dev/cartwright/evidence/archive"
)

// Archive copies closed workflows' histories into the history archive, so
// audits still work after the namespace retention deleted them. worker/wiring
// registers it with the others; the activity type is
// ArchiveClosedHistories.
type Archive struct {
	Temporal client.Client
	Store    *archive.Store
}

// ArchiveClosedHistoriesInput scopes one archiving pass.
type ArchiveClosedHistoriesInput struct {
	// TaskQueue limits the pass to one task queue ("" = whole namespace).
	TaskQueue string `json:"task_queue,omitempty"`
	// ExcludeTypes are workflow types not archived.
	ExcludeTypes []string `json:"exclude_types,omitempty"`
	// Overlap overrides history.DefaultOverlap.
	Overlap time.Duration `json:"overlap,omitempty"`
}

// ArchiveClosedHistories archives every run closed since the last pass. It
// heartbeats its progress after each run; a retry starts the pass again and
// skips what is already archived, so failing half way loses nothing.
func (a *Archive) ArchiveClosedHistories(ctx context.Context, in ArchiveClosedHistoriesInput) (history.SweepResult, error) {
	res, err := history.Sweep(ctx, a.Temporal, a.Store, history.SweepOptions{
		TaskQueue: in.TaskQueue, ExcludeTypes: in.ExcludeTypes, Overlap: in.Overlap,
		Progress: func(r history.SweepResult) {
			if activity.IsActivity(ctx) {
				activity.RecordHeartbeat(ctx, r)
			}
		},
	})
	if err != nil {
		// Like every activity: a closed-set code (UPSTREAM_ERROR for a
		// database or Temporal failure), never a Go error type name.
		return res, ApplicationError(err)
	}
	return res, nil
}
