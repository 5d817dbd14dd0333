package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/evidence"
	"github.com/cartwright-dev/cartwright/toolkit"
)

// Reconcile runs the reconcile pass (docs/evidence.md#reconcile) as activities:
// the database half (stale audits, audit ↔ evidence invariants) through the
// evidence package, the workflow-result half through the Temporal client.
// worker/wiring registers it with the others; activity type names
// are ReconcileAudits, CollectResultSnapshots, FindMissingSnapshots.
type Reconcile struct {
	Pool     *pgxpool.Pool
	Temporal client.Client
	Logger   *zap.Logger
	// PendingAfter is the default stale-audit threshold (config.ReconcilePendingAfter).
	PendingAfter time.Duration
	// SideEffectTools, when set, must have a success audit for every snapshot.
	SideEffectTools []string
	// RowKeys verify every row's signature and CheckDraftTotal re-derives
	// draft rows' totals (evidence.ReconcileOptions).
	RowKeys         *evidence.RowKeys
	CheckDraftTotal evidence.DraftTotalCheck
}

// ReconcileAuditsInput overrides the worker's defaults for one pass.
type ReconcileAuditsInput struct {
	PendingAfter time.Duration `json:"pending_after,omitempty"`
}

// ReconcileAudits closes stale pending audits and checks the database
// invariants; the report is the activity result.
func (a *Reconcile) ReconcileAudits(ctx context.Context, in ReconcileAuditsInput) (evidence.ReconcileReport, error) {
	opts := evidence.ReconcileOptions{PendingAfter: a.PendingAfter, SideEffectTools: a.SideEffectTools, Logger: a.logger(),
		RowKeys: a.RowKeys, CheckDraftTotal: a.CheckDraftTotal}
	if in.PendingAfter > 0 {
		opts.PendingAfter = in.PendingAfter
	}
	rep, err := evidence.Reconcile(ctx, a.Pool, opts)
	if err != nil {
		return rep, ApplicationError(err)
	}
	return rep, nil
}

// SnapshotRef is a snapshot id named in a closed workflow's result.
type SnapshotRef struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	SnapshotID string `json:"snapshot_id"`
}

// CollectResultSnapshotsInput selects the closed workflows to read.
type CollectResultSnapshotsInput struct {
	// ClosedWithin: workflows that completed in this window before now.
	ClosedWithin time.Duration `json:"closed_within"`
	// TaskQueue limits the scan to one task queue (empty: every queue).
	TaskQueue string `json:"task_queue,omitempty"`
	// ExcludeTypes are workflow types not to read (the reconcile itself).
	ExcludeTypes []string `json:"exclude_types,omitempty"`
	// MaxWorkflows bounds one pass (default 1000).
	MaxWorkflows int `json:"max_workflows,omitempty"`
}

// CollectResultSnapshotsResult lists the snapshot ids found.
type CollectResultSnapshotsResult struct {
	WorkflowsScanned int           `json:"workflows_scanned"`
	Refs             []SnapshotRef `json:"refs"`
	// Truncated: more workflows matched than MaxWorkflows.
	Truncated bool `json:"truncated"`
}

var snapshotIDPattern = regexp.MustCompile(`^ev_[0-9A-HJKMNP-TV-Z]{26}$`)

// CollectResultSnapshots reads the results of the workflows that completed
// in the window and returns every evidence snapshot id they name.
func (a *Reconcile) CollectResultSnapshots(ctx context.Context, in CollectResultSnapshotsInput) (CollectResultSnapshotsResult, error) {
	var out CollectResultSnapshotsResult
	if in.MaxWorkflows <= 0 {
		in.MaxWorkflows = 1000
	}
	since := time.Now().Add(-in.ClosedWithin).UTC().Format(time.RFC3339Nano)
	query := fmt.Sprintf(`ExecutionStatus = "Completed" AND CloseTime > "%s"`, since)
	if in.TaskQueue != "" {
		query += fmt.Sprintf(` AND TaskQueue = %q`, in.TaskQueue)
	}
	for _, t := range in.ExcludeTypes {
		query += fmt.Sprintf(` AND WorkflowType != %q`, t)
	}
	var token []byte
	for {
		page, err := a.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: query, PageSize: 200, NextPageToken: token,
		})
		if err != nil {
			return out, ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "list closed workflows: %v", err).WithCause(err))
		}
		for _, ex := range page.Executions {
			if out.WorkflowsScanned >= in.MaxWorkflows {
				out.Truncated = true
				return out, nil
			}
			wf, run := ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId()
			var result json.RawMessage
			if err := a.Temporal.GetWorkflow(ctx, wf, run).Get(ctx, &result); err != nil {
				return out, ApplicationError(toolkit.Errorf(toolkit.UpstreamError, "result of %s: %v", wf, err).WithCause(err))
			}
			for _, id := range snapshotIDs(result) {
				out.Refs = append(out.Refs, SnapshotRef{WorkflowID: wf, RunID: run, SnapshotID: id})
			}
			out.WorkflowsScanned++
			activity.RecordHeartbeat(ctx, out.WorkflowsScanned)
		}
		if token = page.NextPageToken; len(token) == 0 {
			return out, nil
		}
	}
}

// snapshotIDs returns every distinct string in a JSON document that is a
// snapshot id, wherever it sits (envelope.evidence.snapshot_id, lists …).
func snapshotIDs(doc json.RawMessage) []string {
	var v any
	if len(doc) == 0 || json.Unmarshal(doc, &v) != nil {
		return nil
	}
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if snapshotIDPattern.MatchString(x) {
				seen[x] = true
			}
		}
	}
	walk(v)
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// FindMissingSnapshotsInput is the list to check.
type FindMissingSnapshotsInput struct {
	Refs []SnapshotRef `json:"refs"`
}

// FindMissingSnapshotsResult names the refs whose snapshot does not exist.
type FindMissingSnapshotsResult struct {
	Checked int           `json:"checked"`
	Missing []SnapshotRef `json:"missing,omitempty"`
}

// FindMissingSnapshots reports which of the given snapshot ids have no row.
func (a *Reconcile) FindMissingSnapshots(ctx context.Context, in FindMissingSnapshotsInput) (FindMissingSnapshotsResult, error) {
	ids := make([]string, len(in.Refs))
	for i, r := range in.Refs {
		ids[i] = r.SnapshotID
	}
	missing, err := evidence.MissingSnapshots(ctx, a.Pool, ids)
	if err != nil {
		return FindMissingSnapshotsResult{}, ApplicationError(err)
	}
	gone := map[string]bool{}
	for _, id := range missing {
		gone[id] = true
	}
	out := FindMissingSnapshotsResult{Checked: len(in.Refs)}
	for _, r := range in.Refs {
		if gone[r.SnapshotID] {
			out.Missing = append(out.Missing, r)
			a.logger().Warn("reconcile invariant violated", zap.String("invariant", evidence.InvResultSnapshotMissing),
				zap.String("workflow_id", r.WorkflowID), zap.String("run_id", r.RunID), zap.String("snapshot_id", r.SnapshotID))
		}
	}
	return out, nil
}

func (a *Reconcile) logger() *zap.Logger {
	if a.Logger == nil {
		return zap.NewNop()
	}
	return a.Logger
}
