package evidence

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// InvDraftRowMismatch: a draft_orders row whose total, quote hash or
// currency is not what the create tool's evidence snapshot says it wrote,
// or which has no such snapshot at all (docs/audit.md#business-rows). The snapshot's
// output is hash-chained and checked by Verify; the business row is not, so
// this is what catches a row changed behind the application's back.
const InvDraftRowMismatch = "draft_row_mismatch"

// createDraftTool is commerce.ToolCreateDraftOrder (evidence sits below
// commerce and cannot import it).
const createDraftTool = "checkout.create_draft_order"

// checkDraftRows sweeps the draft orders of the scan window for rows no
// create snapshot vouches for: one whose snapshots all disagree with it at
// once, one with no snapshot only after the snapshot grace (the row commits
// before the call's snapshot does, and a crashed call writes it on retry).
func checkDraftRows(ctx context.Context, pool *pgxpool.Pool, opts ReconcileOptions, rep *ReconcileReport) error {
	rows, err := pool.Query(ctx, `
		SELECT d.draft_order_id, d.correlation_id, d.workflow_id FROM draft_orders d
		WHERE d.created_at > now() - make_interval(secs => $1)
		  AND NOT EXISTS (SELECT 1 FROM evidence_snapshots s
		      WHERE s.tool = $3 AND s.output->>'draft_order_id' = d.draft_order_id
		        AND s.output->>'quote_hash' = d.quote_hash
		        AND s.output->'grand_total'->>'currency' = d.currency
		        AND (s.output->'grand_total'->>'amount')::bigint = d.grand_total_minor)
		  AND (d.created_at < now() - make_interval(secs => $2)
		      OR EXISTS (SELECT 1 FROM evidence_snapshots s WHERE s.tool = $3 AND s.output->>'draft_order_id' = d.draft_order_id))
		ORDER BY d.created_at`, opts.ScanWindow.Seconds(), opts.SnapshotGrace.Seconds(), createDraftTool)
	if err != nil {
		return dbError("check draft order rows", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, corr, wf string
		if err := rows.Scan(&id, &corr, &wf); err != nil {
			return dbError("check draft order rows", err)
		}
		rep.DraftRowsMismatched++
		rep.addViolation(Violation{Invariant: InvDraftRowMismatch, Tool: createDraftTool, CorrelationID: corr,
			WorkflowID: wf, DraftOrderID: id})
	}
	if err := rows.Err(); err != nil {
		return dbError("check draft order rows", err)
	}
	return nil
}
