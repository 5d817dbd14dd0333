package maintenance

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/activities/history"
)

// ArchiveHistoriesWorkflowName is the registered type of ArchiveHistories.
const ArchiveHistoriesWorkflowName = "ArchiveHistories"

// ArchiveHistoriesInput scopes the scheduled archiving pass.
type ArchiveHistoriesInput struct {
	// TaskQueue: archive the runs of this task queue ("" = all).
	TaskQueue string `json:"task_queue,omitempty"`
	// ExcludeTypes are workflow types not worth archiving; the archiver's
	// own runs are always excluded.
	ExcludeTypes []string `json:"exclude_types,omitempty"`
	// Overlap overrides history.DefaultOverlap.
	Overlap time.Duration `json:"overlap,omitempty"`
}

// ArchiveHistories copies the histories of workflows closed since its last
// run into PostgreSQL (docs/audit.md#histories), so an audit works after Temporal
// deleted them. One activity does the pass; it is retried until it gets
// through, and only a complete pass advances the watermark.
func ArchiveHistories(ctx workflow.Context, in ArchiveHistoriesInput) (history.SweepResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		// Heartbeats come after every archived run; a stuck pass is retried.
		HeartbeatTimeout: 2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute, MaximumAttempts: 5,
		},
		Summary: "archive closed histories",
	})
	exclude := append([]string{ArchiveHistoriesWorkflowName}, in.ExcludeTypes...)
	var a *activities.Archive
	var res history.SweepResult
	err := workflow.ExecuteActivity(ctx, a.ArchiveClosedHistories, activities.ArchiveClosedHistoriesInput{
		TaskQueue: in.TaskQueue, ExcludeTypes: exclude, Overlap: in.Overlap,
	}).Get(ctx, &res)
	return res, err
}
