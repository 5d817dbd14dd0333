package evidence

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// Reconcile defaults and floors (docs/evidence.md#reconcile).
const (
	DefaultPendingAfter  = 2 * time.Hour
	MinPendingAfter      = 60 * time.Second
	DefaultScanWindow    = 24 * time.Hour
	MinScanWindow        = time.Hour
	DefaultSnapshotGrace = 10 * time.Minute
	maxListed            = 100
)

// Invariants Reconcile checks.
const (
	// InvSuccessWithoutSnapshot: a side effect audited as success has no evidence snapshot.
	InvSuccessWithoutSnapshot = "success_audit_without_snapshot"
	// InvSnapshotWithFailedAudit: a side-effecting call left evidence of success but its audit says failed.
	InvSnapshotWithFailedAudit = "snapshot_with_failed_audit"
	// InvSnapshotWithoutAudit: a snapshot of a side-effecting tool has no success audit.
	InvSnapshotWithoutAudit = "snapshot_without_success_audit"
	// InvResultSnapshotMissing: a closed workflow's result names a snapshot that does not exist.
	InvResultSnapshotMissing = "result_snapshot_missing"
)

// ReconcileOptions tune one reconcile pass. Zero values take the defaults.
type ReconcileOptions struct {
	// PendingAfter: pending audits older than this become failed (default 2h, at least 60s).
	PendingAfter time.Duration
	// ScanWindow bounds the invariant checks to rows of the last window (default 24h, at least 1h).
	ScanWindow time.Duration
	// SnapshotGrace: a success audit younger than this may still be waiting
	// for its snapshot (the invoker records after the handler returns).
	SnapshotGrace time.Duration
	// SideEffectTools, when set, also requires every snapshot of these
	// tools to have a success audit (a dry run must then not record evidence).
	SideEffectTools []string
	// BatchSize is how many stale audits one UPDATE closes (default 500).
	BatchSize int
	Logger    *zap.Logger
	// RowKeys are the writers' public keys every row's signature is checked
	// with (docs/evidence.md#row-signatures); required.
	RowKeys *RowKeys
	// CheckDraftTotal, when set, re-derives each draft row's total from the
	// snapshots its seal names (InvDraftTotalMismatch).
	CheckDraftTotal DraftTotalCheck
}

// Check applies the defaults and refuses values below their floors, so a
// caller can refuse bad options before it opens a connection.
func (o *ReconcileOptions) Check() error {
	if o.PendingAfter == 0 {
		o.PendingAfter = DefaultPendingAfter
	}
	if o.PendingAfter < MinPendingAfter {
		return fmt.Errorf("reconcile: pending threshold %s is below the %s floor", o.PendingAfter, MinPendingAfter)
	}
	if o.ScanWindow == 0 {
		o.ScanWindow = DefaultScanWindow
	}
	if o.ScanWindow < MinScanWindow {
		return fmt.Errorf("reconcile: scan window %s is below the %s floor", o.ScanWindow, MinScanWindow)
	}
	if o.SnapshotGrace <= 0 {
		o.SnapshotGrace = DefaultSnapshotGrace
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.RowKeys == nil || len(o.RowKeys.byID) == 0 {
		return fmt.Errorf("reconcile: no row public keys (%s, %s): a forged row could not be told from a written one",
			publicKeys[WriterWorker].KeysVar, publicKeys[WriterGateway].KeysVar)
	}
	return nil
}

// Violation is one broken invariant, naming the rows involved.
type Violation struct {
	Invariant     string `json:"invariant"`
	AuditID       int64  `json:"audit_id,omitempty"`
	SnapshotID    string `json:"snapshot_id,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
	Tool          string `json:"tool,omitempty"`
	WorkflowID    string `json:"workflow_id,omitempty"`
	DraftOrderID  string `json:"draft_order_id,omitempty"`
	// Detail says what is missing, where an invariant has several causes.
	Detail string `json:"detail,omitempty"`
}

// ReconcileReport counts what one pass did and found.
type ReconcileReport struct {
	PendingAfterSeconds int64 `json:"pending_after_seconds"`
	// MarkedFailed counts pending audits closed as failed by this pass;
	// MarkedFailedIDs lists up to 100 of them.
	MarkedFailed    int     `json:"marked_failed"`
	MarkedFailedIDs []int64 `json:"marked_failed_ids,omitempty"`
	// StillPending counts pending audits younger than the threshold.
	StillPending int `json:"still_pending"`
	// One count per invariant; Violations lists up to 100 rows overall.
	SuccessWithoutSnapshot  int `json:"success_audit_without_snapshot"`
	SnapshotWithFailedAudit int `json:"snapshot_with_failed_audit"`
	SnapshotWithoutAudit    int `json:"snapshot_without_success_audit"`
	ResultSnapshotsChecked  int `json:"result_snapshots_checked"`
	ResultSnapshotsMissing  int `json:"result_snapshots_missing"`
	// DraftRowsMismatched counts draft_orders rows no create snapshot
	// vouches for (reconcile_rows.go).
	DraftRowsMismatched int `json:"draft_rows_mismatched"`
	// DraftRowsUnbacked counts draft_orders rows their own workflow's
	// evidence does not back (InvDraftRowUnbacked).
	DraftRowsUnbacked int `json:"draft_rows_unbacked"`
	// The authorship invariants (reconcile_authors.go).
	EvidenceRowsForged    int `json:"evidence_rows_forged"`
	DraftRowsForged       int `json:"draft_rows_forged"`
	DraftRowsForeignRun   int `json:"draft_rows_foreign_run"`
	DraftTotalsMismatched int `json:"draft_totals_mismatched"`
	StockNeverReturned    int `json:"stock_never_returned"`
	StockTakenTwice       int `json:"stock_taken_twice"`
	// StockReturnedTwice counts lines given back more often than they
	// were committed (InvStockReturnedTwice).
	StockReturnedTwice int         `json:"stock_returned_twice"`
	Violations         []Violation `json:"violations,omitempty"`
	DurationMS         int64       `json:"duration_ms"`
}

// ViolationCount is the number of broken invariants found.
func (r ReconcileReport) ViolationCount() int {
	return r.SuccessWithoutSnapshot + r.SnapshotWithFailedAudit + r.SnapshotWithoutAudit + r.ResultSnapshotsMissing + r.DraftRowsMismatched +
		r.DraftRowsUnbacked + r.EvidenceRowsForged + r.DraftRowsForged + r.DraftRowsForeignRun + r.DraftTotalsMismatched +
		r.StockNeverReturned + r.StockTakenTwice + r.StockReturnedTwice
}

// Merge adds the invariant counts and listed violations of o (a later
// check of the same pass, e.g. the workflow-result check) into r.
func (r *ReconcileReport) Merge(o ReconcileReport) {
	r.ResultSnapshotsChecked += o.ResultSnapshotsChecked
	r.ResultSnapshotsMissing += o.ResultSnapshotsMissing
	for _, v := range o.Violations {
		r.addViolation(v)
	}
}

func (r *ReconcileReport) addViolation(v Violation) {
	if len(r.Violations) < maxListed {
		r.Violations = append(r.Violations, v)
	}
}

// LogFields renders the report as structured log fields.
func (r ReconcileReport) LogFields() []zap.Field {
	return []zap.Field{
		zap.String("event", "reconcile_report"),
		zap.Int64("pending_after_seconds", r.PendingAfterSeconds),
		zap.Int("marked_failed", r.MarkedFailed),
		zap.Int("still_pending", r.StillPending),
		zap.Int("success_audit_without_snapshot", r.SuccessWithoutSnapshot),
		zap.Int("snapshot_with_failed_audit", r.SnapshotWithFailedAudit),
		zap.Int("snapshot_without_success_audit", r.SnapshotWithoutAudit),
		zap.Int("result_snapshots_checked", r.ResultSnapshotsChecked),
		zap.Int("result_snapshots_missing", r.ResultSnapshotsMissing),
		zap.Int("draft_rows_mismatched", r.DraftRowsMismatched),
		zap.Int("draft_rows_unbacked", r.DraftRowsUnbacked),
		zap.Int("evidence_rows_forged", r.EvidenceRowsForged),
		zap.Int("draft_rows_forged", r.DraftRowsForged),
		zap.Int("draft_rows_foreign_run", r.DraftRowsForeignRun),
		zap.Int("draft_totals_mismatched", r.DraftTotalsMismatched),
		zap.Int("stock_never_returned", r.StockNeverReturned),
		zap.Int("stock_taken_twice", r.StockTakenTwice),
		zap.Int("stock_returned_twice", r.StockReturnedTwice),
		zap.Int("violations", r.ViolationCount()),
		zap.Int64("duration_ms", r.DurationMS),
	}
}

// Reconcile runs one pass over the database: it closes stale pending
// audits as failed (reconcile_action=mark_failed_timeout; failed is
// terminal and never touched again) and checks the audit ↔ evidence
// invariants. Running it twice in a row changes nothing the second time.
// The workflow-result invariant needs Temporal; see MissingSnapshots.
func Reconcile(ctx context.Context, pool *pgxpool.Pool, opts ReconcileOptions) (ReconcileReport, error) {
	start := time.Now()
	rep := ReconcileReport{}
	if err := opts.Check(); err != nil {
		return rep, err
	}
	rep.PendingAfterSeconds = int64(opts.PendingAfter / time.Second)
	if err := markStale(ctx, pool, opts, &rep); err != nil {
		return rep, err
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM audit_events WHERE status = 'pending'`).Scan(&rep.StillPending); err != nil {
		return rep, dbError("count pending audits", err)
	}
	if err := checkInvariants(ctx, pool, opts, &rep); err != nil {
		return rep, err
	}
	if err := checkDraftRows(ctx, pool, opts, &rep); err != nil {
		return rep, err
	}
	if err := checkUnbackedDraftRows(ctx, pool, opts, &rep); err != nil {
		return rep, err
	}
	if err := checkAuthors(ctx, pool, opts, &rep); err != nil {
		return rep, err
	}
	if err := checkStockLedger(ctx, pool, &rep); err != nil {
		return rep, err
	}
	rep.DurationMS = time.Since(start).Milliseconds()
	opts.Logger.Info("reconcile pass", rep.LogFields()...)
	return rep, nil
}

// markStale closes stale pending audits batch by batch. Diagnostics are
// added without overwriting fields the row already has
// (docs/evidence.md#reconcile).
func markStale(ctx context.Context, pool *pgxpool.Pool, opts ReconcileOptions, rep *ReconcileReport) error {
	for {
		rows, err := pool.Query(ctx, `WITH stale AS (
				SELECT audit_id FROM audit_events
				WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1)
				ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
			UPDATE audit_events a SET status = 'failed',
				reason = CASE WHEN a.reason = '' THEN 'audit_timeout' ELSE a.reason || ':audit_timeout' END,
				evidence_refs = jsonb_build_object(
					'reconcile_action', 'mark_failed_timeout',
					'timeout_detected_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
					'stale_duration_seconds', floor(extract(epoch FROM now() - a.created_at))::bigint,
					'source', 'reconcile') || a.evidence_refs,
				updated_at = now(), finalized_at = now()
			FROM stale WHERE a.audit_id = stale.audit_id AND a.status = 'pending'
			RETURNING a.audit_id`, opts.PendingAfter.Seconds(), opts.BatchSize)
		if err != nil {
			return dbError("mark stale audits", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return dbError("mark stale audits", err)
		}
		rep.MarkedFailed += len(ids)
		for _, id := range ids {
			if len(rep.MarkedFailedIDs) < maxListed {
				rep.MarkedFailedIDs = append(rep.MarkedFailedIDs, id)
			}
		}
		if len(ids) < opts.BatchSize {
			return nil
		}
	}
}

// checkInvariants counts and lists every broken audit ↔ evidence invariant
// among the rows of the scan window.
func checkInvariants(ctx context.Context, pool *pgxpool.Pool, opts ReconcileOptions, rep *ReconcileReport) error {
	window, grace := opts.ScanWindow.Seconds(), opts.SnapshotGrace.Seconds()
	checks := []struct {
		name  string
		count *int
		sql   string
		args  []any
	}{{
		InvSuccessWithoutSnapshot, &rep.SuccessWithoutSnapshot, `
		SELECT a.audit_id, '', a.correlation_id, a.tool, a.workflow_id FROM audit_events a
		WHERE a.two_phase AND a.status = 'success'
		  AND a.finalized_at > now() - make_interval(secs => $1) AND a.finalized_at < now() - make_interval(secs => $2)
		  AND NOT EXISTS (SELECT 1 FROM evidence_snapshots s WHERE s.tool = a.tool AND (s.correlation_id = a.correlation_id
		      OR (a.workflow_id <> '' AND s.workflow_id = a.workflow_id AND s.run_id = a.run_id AND s.activity_id = a.activity_id)))
		ORDER BY a.audit_id`, []any{window, grace},
	}, {
		InvSnapshotWithFailedAudit, &rep.SnapshotWithFailedAudit, `
		SELECT a.audit_id, s.snapshot_id, s.correlation_id, s.tool, s.workflow_id
		FROM evidence_snapshots s JOIN audit_events a ON a.two_phase AND a.correlation_id = s.correlation_id AND a.tool = s.tool
		WHERE a.status = 'failed' AND s.created_at > now() - make_interval(secs => $1)
		ORDER BY s.created_at`, []any{window},
	}, {
		InvSnapshotWithoutAudit, &rep.SnapshotWithoutAudit, `
		SELECT 0::bigint, s.snapshot_id, s.correlation_id, s.tool, s.workflow_id FROM evidence_snapshots s
		WHERE s.tool = ANY($3::text[])
		  AND s.created_at > now() - make_interval(secs => $1) AND s.created_at < now() - make_interval(secs => $2)
		  AND NOT EXISTS (SELECT 1 FROM audit_events a WHERE a.two_phase AND a.status = 'success'
		      AND a.correlation_id = s.correlation_id AND a.tool = s.tool)
		ORDER BY s.created_at`, []any{window, grace, opts.SideEffectTools},
	}}
	for _, c := range checks {
		if c.name == InvSnapshotWithoutAudit && len(opts.SideEffectTools) == 0 {
			continue
		}
		rows, err := pool.Query(ctx, c.sql, c.args...)
		if err != nil {
			return dbError("check "+c.name, err)
		}
		vs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Violation, error) {
			v := Violation{Invariant: c.name}
			return v, row.Scan(&v.AuditID, &v.SnapshotID, &v.CorrelationID, &v.Tool, &v.WorkflowID)
		})
		if err != nil {
			return dbError("check "+c.name, err)
		}
		*c.count = len(vs)
		for i, v := range vs {
			rep.addViolation(v)
			if i >= maxListed {
				continue // counted, not logged one by one
			}
			opts.Logger.Warn("reconcile invariant violated", zap.String("invariant", v.Invariant),
				zap.Int64("audit_id", v.AuditID), zap.String("snapshot_id", v.SnapshotID),
				zap.String("correlation_id", v.CorrelationID), zap.String("tool", v.Tool))
		}
	}
	return nil
}

// MissingSnapshots returns the ids among ids that name no snapshot: the
// database half of the "every snapshot named in a closed workflow's
// result exists" invariant (the workflow layer collects the ids).
func MissingSnapshots(ctx context.Context, pool *pgxpool.Pool, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := pool.Query(ctx, `SELECT DISTINCT id FROM unnest($1::text[]) AS id
		WHERE NOT EXISTS (SELECT 1 FROM evidence_snapshots s WHERE s.snapshot_id = id) ORDER BY id`, ids)
	if err != nil {
		return nil, dbError("find missing snapshots", err)
	}
	missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, dbError("find missing snapshots", err)
	}
	return missing, nil
}
