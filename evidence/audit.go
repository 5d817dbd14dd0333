package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// AuditStatus is the state of an audit event
// (docs/evidence.md#two-phase-audit).
type AuditStatus string

// Audit states. Pending is the first phase of a side-effecting call;
// success and failed are terminal.
const (
	AuditPending AuditStatus = "pending"
	AuditSuccess AuditStatus = "success"
	AuditFailed  AuditStatus = "failed"
)

// AuditAction is the policy decision an audit records
// (docs/evidence.md#audit-events: a fixed set).
type AuditAction string

// The three audit actions.
const (
	ActionAllow    AuditAction = "allow"
	ActionRedirect AuditAction = "redirect"
	ActionReject   AuditAction = "reject"
)

// Errors of the audit API, wrapped in toolkit errors where a caller needs a code.
var (
	// ErrAuditClosed: WritePending found its correlation id already
	// finalised as failed; the side effect must not happen.
	ErrAuditClosed = errors.New("evidence: audit already closed as failed")
	// ErrAuditNotFound: Finalize named a correlation id with no two-phase row.
	ErrAuditNotFound = errors.New("evidence: no two-phase audit for this correlation id")
)

var payloadSHAPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// AuditEntry is one audit event to write. UserID is hashed before it is
// stored; Refs lands in evidence_refs with correlation_id, payload_sha and
// source added at the top level (docs/mcp.md#audit-invariants, AUDIT-INV-06).
// Refs must not hold raw PII.
type AuditEntry struct {
	CorrelationID string
	Tool          string
	UserID        string
	ActorType     toolkit.ActorType
	Action        AuditAction
	Reason        string
	// PayloadSHA is the 64-hex SHA-256 of the side effect's payload (optional).
	PayloadSHA string
	Call       toolkit.CallContext
	Refs       map[string]any
}

func (e AuditEntry) check() error {
	switch {
	case !toolkit.ValidCorrelationID(e.CorrelationID):
		return toolkit.Errorf(toolkit.InvalidArgument, "audit: correlation id %q is not corr-{16 hex}", e.CorrelationID)
	case e.Tool == "":
		return toolkit.Errorf(toolkit.InvalidArgument, "audit: tool is required")
	case e.PayloadSHA != "" && !payloadSHAPattern.MatchString(e.PayloadSHA):
		return toolkit.Errorf(toolkit.InvalidArgument, "audit: payload_sha must be 64 lower-case hex characters")
	}
	return nil
}

func (e AuditEntry) refs(source string) ([]byte, error) {
	m := map[string]any{}
	for k, v := range e.Refs {
		m[k] = v
	}
	m["correlation_id"] = e.CorrelationID
	m["payload_sha"] = e.PayloadSHA
	m["source"] = source
	b, err := json.Marshal(m)
	if err != nil {
		return nil, toolkit.Errorf(toolkit.InvalidArgument, "audit: refs are not JSON: %v", err)
	}
	return b, nil
}

// WritePending writes the first phase of a side-effecting call and returns
// its audit id. Call it before the side effect; if it fails, the side
// effect must not happen (audit first). It is idempotent per correlation
// id: a retried activity finds its own row (pending or success) and gets
// its id back. A row already failed (reconcile timed it out) returns
// ErrAuditClosed, wrapped in a CONFLICT error: do not perform the effect.
func (s *Store) WritePending(ctx context.Context, e AuditEntry) (int64, error) {
	row, err := e.twoPhaseRow()
	if err != nil {
		return 0, err
	}
	var id int64
	var status AuditStatus
	var tool string
	err = s.pool.QueryRow(ctx, `WITH ins AS (
		INSERT INTO audit_events (correlation_id, two_phase, tool, user_id_hash, actor_type, action, reason, status,
			payload_sha, workflow_id, run_id, activity_id, evidence_refs)
		VALUES ($1, true, $2, $3, $4, $5, $6, 'pending', $7, $8, $9, $10, $11)
		ON CONFLICT (correlation_id) WHERE two_phase DO NOTHING
		RETURNING audit_id, status, tool)
		SELECT audit_id, status, tool FROM ins
		UNION ALL
		SELECT audit_id, status, tool FROM audit_events WHERE correlation_id = $1 AND two_phase
		LIMIT 1`,
		row.CorrelationID, row.Tool, row.UserIDHash, row.ActorType, row.Action, row.Reason,
		row.PayloadSHA, row.WorkflowID, row.RunID, row.ActivityID, row.Refs).Scan(&id, &status, &tool)
	if errors.Is(err, pgx.ErrNoRows) {
		// A concurrent writer inserted the row after this statement's
		// snapshot was taken: it is committed now, read it.
		err = s.pool.QueryRow(ctx, `SELECT audit_id, status, tool FROM audit_events WHERE correlation_id = $1 AND two_phase`,
			e.CorrelationID).Scan(&id, &status, &tool)
	}
	if err != nil {
		return 0, dbError("write pending audit", err)
	}
	err = refusal(e, id, status, tool)
	if tool != e.Tool {
		id = 0 // not this call's row
	}
	return id, err
}

// refusal is the answer when the two-phase row of e's correlation id
// exists already as (id, status, tool): CONFLICT when it belongs to another
// tool, or was closed as failed (ErrAuditClosed: the effect must not
// happen); nil when the call may go on (its own row, pending or success).
func refusal(e AuditEntry, id int64, status AuditStatus, tool string) error {
	if tool != e.Tool {
		return toolkit.Errorf(toolkit.Conflict, "audit: correlation id %s already belongs to %s", e.CorrelationID, tool)
	}
	if status == AuditFailed {
		return toolkit.Errorf(toolkit.Conflict, "audit %d for %s was closed as failed; the call must not run", id, e.CorrelationID).
			WithCause(ErrAuditClosed)
	}
	return nil
}

// Finalize closes the pending audit of correlationID as success or failed
// and merges patch into its evidence_refs (docs/evidence.md#two-phase-audit:
// UPDATE … WHERE status='pending', so it happens once). won is false when the
// row was already final — another finaliser or reconcile came first. A failed
// status needs diagnostics: patch must carry error_type or reconcile_action.
func (s *Store) Finalize(ctx context.Context, correlationID string, status AuditStatus, patch map[string]any) (bool, error) {
	if status != AuditSuccess && status != AuditFailed {
		return false, toolkit.Errorf(toolkit.InvalidArgument, "audit: finalize to %q: only success or failed", status)
	}
	if status == AuditFailed && patch["error_type"] == nil && patch["reconcile_action"] == nil {
		return false, toolkit.Errorf(toolkit.InvalidArgument, "audit: a failed audit needs error_type or reconcile_action")
	}
	if patch == nil {
		patch = map[string]any{}
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return false, toolkit.Errorf(toolkit.InvalidArgument, "audit: patch is not JSON: %v", err)
	}
	var id int64
	err = s.pool.QueryRow(ctx, `UPDATE audit_events
		SET status = $2, evidence_refs = coalesce(evidence_refs, '{}'::jsonb) || $3::jsonb,
			updated_at = now(), finalized_at = now()
		WHERE correlation_id = $1 AND two_phase AND status = 'pending'
		RETURNING audit_id`, correlationID, string(status), b).Scan(&id)
	if err == nil {
		s.log.Info("audit finalized", zap.Int64("audit_id", id), zap.String("correlation_id", correlationID),
			zap.String("status", string(status)))
		s.observeAudit(string(status))
		return true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return false, dbError("finalize audit", err)
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM audit_events WHERE correlation_id = $1 AND two_phase)`,
		correlationID).Scan(&exists); err != nil {
		return false, dbError("finalize audit", err)
	}
	if !exists {
		return false, fmt.Errorf("%w: %s", ErrAuditNotFound, correlationID)
	}
	return false, nil
}

// WriteReject records a rejection as one final row
// (docs/evidence.md#rejections: action reject, status success, never pending).
// It is idempotent per correlation id and tool. If it fails the request must be
// refused.
func (s *Store) WriteReject(ctx context.Context, e AuditEntry) error {
	if err := e.check(); err != nil {
		return err
	}
	if e.Reason == "" {
		return toolkit.Errorf(toolkit.InvalidArgument, "audit: a reject needs a reason")
	}
	refs, err := e.refs("activity")
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO audit_events (correlation_id, two_phase, tool, user_id_hash, actor_type,
			action, reason, status, payload_sha, workflow_id, run_id, activity_id, evidence_refs, finalized_at)
		VALUES ($1, false, $2, $3, $4, 'reject', $5, 'success', $6, $7, $8, $9, $10, now())
		ON CONFLICT (correlation_id, tool) WHERE NOT two_phase DO NOTHING`,
		e.CorrelationID, e.Tool, HashUserID(e.UserID), string(e.ActorType), e.Reason, e.PayloadSHA,
		e.Call.WorkflowID, e.Call.RunID, e.Call.ActivityID, refs)
	if err != nil {
		return dbError("write reject audit", err)
	}
	if tag.RowsAffected() == 1 {
		s.observeAudit("rejected")
	}
	return nil
}

// AuditRecord is one stored audit event.
type AuditRecord struct {
	AuditID       int64           `json:"audit_id"`
	CorrelationID string          `json:"correlation_id"`
	TwoPhase      bool            `json:"two_phase"`
	Tool          string          `json:"tool"`
	UserIDHash    string          `json:"user_id_hash"`
	Action        AuditAction     `json:"action"`
	Reason        string          `json:"reason"`
	Status        AuditStatus     `json:"status"`
	PayloadSHA    string          `json:"payload_sha"`
	WorkflowID    string          `json:"workflow_id"`
	ActivityID    string          `json:"activity_id"`
	EvidenceRefs  json.RawMessage `json:"evidence_refs"`
}

// AuditsForCorrelation lists the audit events of one correlation id.
func (s *Store) AuditsForCorrelation(ctx context.Context, correlationID string) ([]AuditRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT audit_id, correlation_id, two_phase, tool, user_id_hash, action, reason,
		status, payload_sha, workflow_id, activity_id, evidence_refs FROM audit_events
		WHERE correlation_id = $1 ORDER BY audit_id`, correlationID)
	if err != nil {
		return nil, dbError("list audits", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (AuditRecord, error) {
		var a AuditRecord
		var refs []byte
		err := row.Scan(&a.AuditID, &a.CorrelationID, &a.TwoPhase, &a.Tool, &a.UserIDHash, &a.Action, &a.Reason,
			&a.Status, &a.PayloadSHA, &a.WorkflowID, &a.ActivityID, &refs)
		a.EvidenceRefs = refs
		return a, err
	})
	if err != nil {
		return nil, dbError("list audits", err)
	}
	return out, nil
}
