package evidence

import (
	"context"
	"strings"

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

// InvDraftRowUnbacked: a draft_orders row its own workflow's evidence does
// not back (docs/quote-seals.md#audit-and-reconcile): no compute_total
// snapshot of that workflow with the row's quote hash and grand total
// resting on a pricing snapshot of the same workflow, or no compliance
// answer allow (nor a support-staff approval) in it. A row made around the
// workflow, or inserted by hand, has neither.
const InvDraftRowUnbacked = "draft_row_unbacked"

// Tool names the backing check reads (commerce and support sit above
// evidence and cannot be imported).
const (
	computeTotalTool   = "checkout.compute_total"
	pricingTool        = "pricing.get_realtime_quote"
	complianceTool     = "compliance.check_item"
	recordApprovalTool = "support.record_approval"
)

// draftBackingSQL selects draft rows (the WHERE clause is appended, its
// parameter $1) with whether their total and their compliance are not
// backed by their own workflow's evidence. A total sealed with its
// evidence (generation 3 on) must name a pricing snapshot of the same
// workflow; an older one needs some pricing snapshot of it.
const draftBackingSQL = `
	SELECT d.draft_order_id, d.correlation_id, d.workflow_id,
	       NOT EXISTS (SELECT 1 FROM evidence_snapshots t
	           WHERE t.workflow_id = d.workflow_id AND t.tool = $2 AND t.status = 'ok'
	             AND t.output->>'quote_hash' = d.quote_hash
	             AND t.output->'grand_total'->>'currency' = d.currency
	             AND (t.output->'grand_total'->>'amount')::bigint = d.grand_total_minor
	             AND EXISTS (SELECT 1 FROM evidence_snapshots p
	                 WHERE p.workflow_id = d.workflow_id AND p.tool = $3 AND p.status = 'ok'
	                   AND (t.output->'evidence' IS NULL OR p.snapshot_id = t.output->'evidence'->>'pricing_snapshot_id'))) AS total_unbacked,
	       NOT EXISTS (SELECT 1 FROM evidence_snapshots c
	           WHERE c.workflow_id = d.workflow_id
	             AND ((c.tool = $4 AND c.output->>'verdict' = 'allow') OR (c.tool = $5 AND c.output->>'decision' = 'approve'
	                  AND c.output->>'staff_verified' = 'true'))) AS compliance_unbacked
	FROM draft_orders d`

// checkUnbackedDraftRows reports every draft row of the scan window that
// InvDraftRowUnbacked describes.
func checkUnbackedDraftRows(ctx context.Context, pool *pgxpool.Pool, opts ReconcileOptions, rep *ReconcileReport) error {
	rows, err := pool.Query(ctx, draftBackingSQL+` WHERE d.created_at > now() - make_interval(secs => $1) ORDER BY d.created_at`,
		opts.ScanWindow.Seconds(), computeTotalTool, pricingTool, complianceTool, recordApprovalTool)
	if err != nil {
		return dbError("check draft order backing", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, corr, wf string
		var total, compliance bool
		if err := rows.Scan(&id, &corr, &wf, &total, &compliance); err != nil {
			return dbError("check draft order backing", err)
		}
		if !total && !compliance {
			continue
		}
		var why []string
		if total {
			why = append(why, "no priced total of its workflow")
		}
		if compliance {
			why = append(why, "no compliance allow or approval of its workflow")
		}
		rep.DraftRowsUnbacked++
		rep.addViolation(Violation{Invariant: InvDraftRowUnbacked, Tool: createDraftTool, CorrelationID: corr,
			WorkflowID: wf, DraftOrderID: id, Detail: strings.Join(why, "; ")})
	}
	if err := rows.Err(); err != nil {
		return dbError("check draft order backing", err)
	}
	return nil
}

// DraftRowBacking is one draft_orders row of a workflow and whether its
// own workflow's evidence backs it (InvDraftRowUnbacked).
type DraftRowBacking struct {
	DraftOrderID string
	// TotalBacked: a compute_total snapshot of the workflow with the row's
	// quote hash and grand total, resting on a pricing snapshot of it.
	TotalBacked bool
	// ComplianceBacked: a compliance allow, or a support-staff approval,
	// in the workflow.
	ComplianceBacked bool
	// Forged says why no worker's key vouches for the row ("" when one
	// does, or the row was recorded before rows were signed), and
	// WorkflowType is the type of the run the worker signed it for
	// (Store.DraftRowsOfMany fills both; docs/evidence.md#draft-row-signatures).
	Forged       string
	WorkflowType string
}

// DraftRowsOfMany is DraftRowsOfMany with each row's author checked with
// s's public keys (Forged, WorkflowType): one statement more.
func (s *Store) DraftRowsOfMany(ctx context.Context, workflowIDs []string) (map[string][]DraftRowBacking, error) {
	out, err := DraftRowsOfMany(ctx, s.pool, workflowIDs)
	if err != nil {
		return nil, err
	}
	auth, err := s.authorship(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+draftColumns+` FROM draft_orders WHERE workflow_id = ANY($1)`, workflowIDs)
	if err != nil {
		return nil, dbError("read draft row authors", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDraft(rows)
		if err != nil {
			return nil, dbError("read draft row authors", err)
		}
		forged := auth.checkDraft(&d.Content, d.Signature, d.RecordedAt)
		for i := range out[d.Content.WorkflowID] {
			if b := &out[d.Content.WorkflowID][i]; b.DraftOrderID == d.Content.DraftOrderID {
				b.Forged = forged
				if d.Signature != "" {
					b.WorkflowType = d.Content.WorkflowType
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbError("read draft row authors", err)
	}
	return out, nil
}

// DraftRowsOfMany returns every draft_orders row that names one of
// workflowIDs, with its backing (docs/quote-seals.md#audit-and-reconcile),
// in one statement (the auditor of many runs reads a batch's rows at once,
// docs/performance.md#audit-rate); each workflow's rows oldest first.
func DraftRowsOfMany(ctx context.Context, pool *pgxpool.Pool, workflowIDs []string) (map[string][]DraftRowBacking, error) {
	rows, err := pool.Query(ctx, draftBackingSQL+` WHERE d.workflow_id = ANY($1) ORDER BY d.workflow_id, d.created_at`,
		workflowIDs, computeTotalTool, pricingTool, complianceTool, recordApprovalTool)
	if err != nil {
		return nil, dbError("read draft order backing", err)
	}
	defer rows.Close()
	out := map[string][]DraftRowBacking{}
	for rows.Next() {
		var b DraftRowBacking
		var corr, wf string
		var totalUnbacked, complianceUnbacked bool
		if err := rows.Scan(&b.DraftOrderID, &corr, &wf, &totalUnbacked, &complianceUnbacked); err != nil {
			return nil, dbError("read draft order backing", err)
		}
		b.TotalBacked, b.ComplianceBacked = !totalUnbacked, !complianceUnbacked
		out[wf] = append(out[wf], b)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError("read draft order backing", err)
	}
	return out, nil
}
