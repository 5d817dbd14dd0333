package audit

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/cartwright-dev/cartwright/evidence"
)

// reads is where an audit's checks read PostgreSQL: the evidence store's
// snapshots and chains, and the business rows. Audit reads per run
// (directReads); AuditMany reads a batch's evidence in a few statements and
// answers each run from it (batchReads, docs/performance.md#audit-rate).
// Both answer the same, so the findings are the same.
type reads interface {
	// snapshot is one snapshot by id (evidence.ErrNotFound if none).
	snapshot(ctx context.Context, id string) (*evidence.SnapshotRecord, error)
	// chain is the workflow's chain, verified (evidence.Store.Verify).
	chain(ctx context.Context, workflowID string) (*evidence.Chain, error)
	// draftRow is the draft_orders row of a draft order id, nil if none.
	draftRow(ctx context.Context, draftOrderID string) (*draftRow, error)
	// workflowRows are the draft_orders rows naming the workflow, with
	// their backing (evidence.DraftRowsOf).
	workflowRows(ctx context.Context, workflowID string) ([]evidence.DraftRowBacking, error)
}

// draftRow is what the audit compares of a draft_orders row, and the
// workflow it names.
type draftRow struct {
	status, quoteHash, currency string
	total                       int64
	workflowID                  string
}

// draftRowColumns are scanned by scanDraftRow, in this order.
const draftRowColumns = `status, quote_hash, currency, grand_total_minor, workflow_id`

func scanDraftRow(row pgx.Row) (*draftRow, error) {
	var r draftRow
	if err := row.Scan(&r.status, &r.quoteHash, &r.currency, &r.total, &r.workflowID); err != nil {
		return nil, err
	}
	return &r, nil
}

// directReads reads each answer when asked: one run's audit.
type directReads struct{ store *evidence.Store }

func (r directReads) snapshot(ctx context.Context, id string) (*evidence.SnapshotRecord, error) {
	return r.store.Get(ctx, id)
}

func (r directReads) chain(ctx context.Context, workflowID string) (*evidence.Chain, error) {
	chains, err := r.store.ReadChains(ctx, []string{workflowID})
	if err != nil {
		return nil, err
	}
	return chains[workflowID], nil
}

func (r directReads) draftRow(ctx context.Context, draftOrderID string) (*draftRow, error) {
	row, err := scanDraftRow(r.store.Pool().QueryRow(ctx, `SELECT `+draftRowColumns+` FROM draft_orders
		WHERE draft_order_id = $1`, draftOrderID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return row, err
}

func (r directReads) workflowRows(ctx context.Context, workflowID string) ([]evidence.DraftRowBacking, error) {
	m, err := r.store.DraftRowsOfMany(ctx, []string{workflowID})
	return m[workflowID], err
}
