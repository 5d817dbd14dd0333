package evidence

import (
	"context"

	"go.uber.org/zap"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// TwoPhaseRow is an AuditEntry checked and encoded as the columns of its
// audit_events row, for a store that writes the row in the same
// transaction as the side effect. WriteAtomic builds it from the entry,
// so the row's rules stay in this package: a valid correlation id, the user
// id hashed, the refs every row carries (AUDIT-INV-06, docs/mcp.md).
type TwoPhaseRow struct {
	CorrelationID string
	Tool          string
	UserIDHash    string
	ActorType     string
	Action        string
	Reason        string
	PayloadSHA    string
	WorkflowID    string
	RunID         string
	ActivityID    string
	// Refs is evidence_refs as the pending phase writes it: the entry's
	// refs with correlation_id, payload_sha and source added. The writer
	// merges its outcome (e.g. draft_order_id) into it when it closes the row.
	Refs []byte
}

// twoPhaseRow checks e as WritePending does and encodes its row.
func (e AuditEntry) twoPhaseRow() (TwoPhaseRow, error) {
	if err := e.check(); err != nil {
		return TwoPhaseRow{}, err
	}
	if e.Action == "" {
		e.Action = ActionAllow
	}
	if e.Action == ActionReject {
		return TwoPhaseRow{}, toolkit.Errorf(toolkit.InvalidArgument, "audit: a reject is final: use WriteReject")
	}
	refs, err := e.refs("activity")
	if err != nil {
		return TwoPhaseRow{}, err
	}
	return TwoPhaseRow{CorrelationID: e.CorrelationID, Tool: e.Tool, UserIDHash: HashUserID(e.UserID),
		ActorType: string(e.ActorType), Action: string(e.Action), Reason: e.Reason, PayloadSHA: e.PayloadSHA,
		WorkflowID: e.Call.WorkflowID, RunID: e.Call.RunID, ActivityID: e.Call.ActivityID, Refs: refs}, nil
}

// AtomicResult is what an atomic write reports about the two-phase row of
// its correlation id.
type AtomicResult struct {
	// AuditID, Status and Tool describe the row after the write; zero when
	// there is none (the write found none and wrote none).
	AuditID int64
	Status  AuditStatus
	Tool    string
	// Closed is true when this write closed the row (inserted it final or
	// moved it from pending): it is logged and counted as Finalize's are.
	Closed bool
}

// AtomicWrite writes row and the side effect in one transaction and
// reports the row. It must not write anything when the correlation id's
// row belongs to another tool or is failed (it reports that row instead),
// and must never commit the effect without the row closed as success.
type AtomicWrite func(ctx context.Context, row TwoPhaseRow) (AtomicResult, error)

// WriteAtomic is the two-phase audit of a side effect that commits in the
// audit's own transaction (docs/evidence.md#one-transaction): write, a
// store of the effect on the same database, inserts or closes the row in
// the statement that performs the effect, so the pending phase is never
// committed on its own. e is checked as WritePending checks it; a row the
// write found failed or another tool's is the CONFLICT WritePending
// answers. write's own errors are returned as they are.
func (s *Store) WriteAtomic(ctx context.Context, e AuditEntry, write AtomicWrite) error {
	row, err := e.twoPhaseRow()
	if err != nil {
		return err
	}
	res, err := write(ctx, row)
	if err != nil {
		return err
	}
	if res.AuditID != 0 {
		if err := refusal(e, res.AuditID, res.Status, res.Tool); err != nil {
			return err
		}
	}
	if res.Closed {
		s.log.Info("audit finalized", zap.Int64("audit_id", res.AuditID), zap.String("correlation_id", e.CorrelationID),
			zap.String("status", string(res.Status)))
		s.observeAudit(string(res.Status))
	}
	return nil
}
