package maintenance

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cartwright-dev/cartwright/activities"
	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
	"github.com/cartwright-dev/cartwright/workflows"
)

// ReconcileWorkflowName is the registered type of Reconcile.
const ReconcileWorkflowName = "Reconcile"

// DefaultReconcileClosedWithin is how far back a pass reads closed
// workflows when the input does not say.
const DefaultReconcileClosedWithin = time.Hour

// ReconcileInput tunes one pass; zero values take the worker's defaults.
type ReconcileInput struct {
	// PendingAfter overrides the stale-audit threshold (at least 60s).
	PendingAfter time.Duration `json:"pending_after,omitempty"`
	// ClosedWithin: read the results of workflows completed this long ago
	// or less (the schedule passes twice its interval, so passes overlap).
	ClosedWithin time.Duration `json:"closed_within,omitempty"`
	// TaskQueue limits the result check to workflows of one task queue.
	TaskQueue string `json:"task_queue,omitempty"`
}

// ReconcileResult is the report of one pass.
type ReconcileResult struct {
	Report           evidence.ReconcileReport `json:"report"`
	WorkflowsScanned int                      `json:"workflows_scanned"`
	// ResultScanTruncated: more closed workflows than one pass reads.
	ResultScanTruncated bool                     `json:"result_scan_truncated"`
	MissingSnapshots    []activities.SnapshotRef `json:"missing_snapshots,omitempty"`
}

// Reconcile is the scheduled reconcile pass (docs/evidence.md#reconcile):
// close stale pending audits, check the audit ↔ evidence invariants, then
// check that every snapshot named in a recently completed workflow's
// result exists. Violations are reported in the result and logged; the
// workflow itself fails only if a step cannot run.
func Reconcile(ctx workflow.Context, in ReconcileInput) (ReconcileResult, error) {
	var a *activities.Reconcile
	var out ReconcileResult
	// NonRetryableCodes ranges over a map and sorts: deterministic, though
	// workflowcheck sees the map range.
	//workflowcheck:ignore
	nonRetryable := toolkit.NonRetryableCodes()
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 10,
			NonRetryableErrorTypes: nonRetryable,
		},
	})
	if err := workflow.ExecuteActivity(ctx, a.ReconcileAudits, activities.ReconcileAuditsInput{PendingAfter: in.PendingAfter}).
		Get(ctx, &out.Report); err != nil {
		return out, err
	}
	window := in.ClosedWithin
	if window <= 0 {
		window = DefaultReconcileClosedWithin
	}
	var collected activities.CollectResultSnapshotsResult
	if err := workflow.ExecuteActivity(ctx, a.CollectResultSnapshots, activities.CollectResultSnapshotsInput{
		ClosedWithin: window, TaskQueue: in.TaskQueue, ExcludeTypes: []string{ReconcileWorkflowName},
	}).Get(ctx, &collected); err != nil {
		return out, err
	}
	out.WorkflowsScanned, out.ResultScanTruncated = collected.WorkflowsScanned, collected.Truncated
	var found activities.FindMissingSnapshotsResult
	if len(collected.Refs) > 0 {
		if err := workflow.ExecuteActivity(ctx, a.FindMissingSnapshots, activities.FindMissingSnapshotsInput{Refs: collected.Refs}).
			Get(ctx, &found); err != nil {
			return out, err
		}
	}
	out.MissingSnapshots = found.Missing
	extra := evidence.ReconcileReport{ResultSnapshotsChecked: found.Checked, ResultSnapshotsMissing: len(found.Missing)}
	for _, m := range found.Missing {
		extra.Violations = append(extra.Violations, evidence.Violation{
			Invariant: evidence.InvResultSnapshotMissing, SnapshotID: m.SnapshotID, WorkflowID: m.WorkflowID})
	}
	out.Report.Merge(extra)
	workflow.GetLogger(ctx).Info("reconcile report",
		"event", "reconcile_report",
		"marked_failed", out.Report.MarkedFailed,
		"still_pending", out.Report.StillPending,
		"success_audit_without_snapshot", out.Report.SuccessWithoutSnapshot,
		"snapshot_with_failed_audit", out.Report.SnapshotWithFailedAudit,
		"snapshot_without_success_audit", out.Report.SnapshotWithoutAudit,
		"workflows_scanned", out.WorkflowsScanned,
		"result_snapshots_checked", out.Report.ResultSnapshotsChecked,
		"result_snapshots_missing", out.Report.ResultSnapshotsMissing,
		"violations", out.Report.ViolationCount())
	// Replay-safe like every workflow metric: a replay records nothing.
	workflow.GetMetricsHandler(ctx).Counter(workflows.MetricReconcileViolations).Inc(int64(out.Report.ViolationCount()))
	return out, nil
}
