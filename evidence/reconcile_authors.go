package evidence

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Invariants of authorship (docs/evidence.md#row-signatures): what the
// database alone could have written.
const (
	// InvEvidenceRowForged: an evidence row of the scan window no writer's
	// key vouches for: unsigned though recorded after rows began to be
	// signed, a signature that does not verify (or by a key that may not
	// write such a row), or content that does not hash to the content hash
	// its signature signs.
	InvEvidenceRowForged = "evidence_row_forged"
	// InvDraftRowForged: a draft_orders row recorded after rows began to be
	// signed without a worker's valid signature over its content.
	InvDraftRowForged = "draft_row_forged"
	// InvDraftRowForeignRun: a draft row the worker wrote for a run whose
	// type is not DraftOrder (DraftWorkflowType), as its signature says.
	InvDraftRowForeignRun = "draft_row_foreign_run"
	// InvDraftTotalMismatch: a draft row whose total its sealed snapshots do
	// not give (ReconcileOptions.CheckDraftTotal).
	InvDraftTotalMismatch = "draft_total_mismatch"
)

// DraftTotalCheck re-derives a draft row's total from the snapshots its
// seal names and says how it differs ("" when it does not). The commerce
// floor provides it (the write's own check); evidence cannot import it.
type DraftTotalCheck func(ctx context.Context, row DraftRow) (string, error)

// DraftRow is a draft_orders row as reconcile reads it.
type DraftRow struct {
	Content    DraftRowContent
	Status     string
	Signature  string
	RecordedAt *time.Time
}

// authorColumns is snapshotColumns without the output, which the content
// hash covers through output_hash: reconcile checks authors, verify checks
// outputs.
var authorColumns = strings.Replace(snapshotColumns, " output,", " 'null'::jsonb,", 1)

// checkEvidenceAuthors names every evidence row of the scan window that
// InvEvidenceRowForged describes.
func checkEvidenceAuthors(ctx context.Context, pool *pgxpool.Pool, opts ReconcileOptions, auth authorship, rep *ReconcileReport) error {
	rows, err := pool.Query(ctx, `SELECT `+authorColumns+` FROM evidence_snapshots
		WHERE recorded_at > now() - make_interval(secs => $1) ORDER BY recorded_at, snapshot_id`, opts.ScanWindow.Seconds())
	if err != nil {
		return dbError("check evidence authors", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return dbError("check evidence authors", err)
		}
		detail := ""
		if kind, d := auth.check(r); kind != "" {
			detail = kind + ": " + d
		} else if r.HashFormat == hashFormatSigned {
			if h, err := r.contentHash(); err != nil || h != r.ContentHash {
				detail = fmt.Sprintf("%s: its content hashes to %s, its signature signs %s", ProblemEditedRow, h, r.ContentHash)
			}
		}
		if detail == "" {
			continue
		}
		rep.EvidenceRowsForged++
		rep.addViolation(Violation{Invariant: InvEvidenceRowForged, SnapshotID: r.SnapshotID, CorrelationID: r.CorrelationID,
			Tool: r.Tool, WorkflowID: r.WorkflowID, Detail: detail})
	}
	if err := rows.Err(); err != nil {
		return dbError("check evidence authors", err)
	}
	return nil
}

// draftColumns is what ReadDraftRows reads, in scanDraft's order.
const draftColumns = `draft_order_id, user_id_hash, tool, idempotency_key, quote_id, quote_hash, currency,
	grand_total_minor, total, ship_to_country, ship_to_region, ship_to_postal, ship_to_sealed, ship_to_nonce,
	ship_to_key_id, correlation_id, workflow_id, run_id, coalesce(workflow_type, ''), created_at, expires_at,
	coalesce(signer_key_id, ''), status, coalesce(row_signature, ''), recorded_at`

func scanDraft(row scanner) (DraftRow, error) {
	var d DraftRow
	c := &d.Content
	var total []byte
	err := row.Scan(&c.DraftOrderID, &c.UserIDHash, &c.Tool, &c.IdempotencyKey, &c.QuoteID, &c.QuoteHash, &c.Currency,
		&c.GrandTotalMinor, &total, &c.ShipToCountry, &c.ShipToRegion, &c.ShipToPostal, &c.ShipToSealed, &c.ShipToNonce,
		&c.ShipToKeyID, &c.CorrelationID, &c.WorkflowID, &c.RunID, &c.WorkflowType, &c.CreatedAt, &c.ExpiresAt,
		&c.SignerKeyID, &d.Status, &d.Signature, &d.RecordedAt)
	c.Total = json.RawMessage(total)
	return d, err
}

// checkDraftAuthors names every draft row of the scan window that
// InvDraftRowForged, InvDraftRowForeignRun or InvDraftTotalMismatch
// describes.
func checkDraftAuthors(ctx context.Context, pool *pgxpool.Pool, opts ReconcileOptions, auth authorship, rep *ReconcileReport) error {
	rows, err := pool.Query(ctx, `SELECT `+draftColumns+` FROM draft_orders
		WHERE created_at > now() - make_interval(secs => $1) OR recorded_at > now() - make_interval(secs => $1)
		ORDER BY created_at, draft_order_id`, opts.ScanWindow.Seconds())
	if err != nil {
		return dbError("check draft row authors", err)
	}
	var drafts []DraftRow
	for rows.Next() {
		d, err := scanDraft(rows)
		if err != nil {
			rows.Close()
			return dbError("check draft row authors", err)
		}
		drafts = append(drafts, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return dbError("check draft row authors", err)
	}
	for _, d := range drafts {
		c := d.Content
		v := Violation{Tool: createDraftTool, CorrelationID: c.CorrelationID, WorkflowID: c.WorkflowID, DraftOrderID: c.DraftOrderID}
		if why := auth.checkDraft(&c, d.Signature, d.RecordedAt); why != "" {
			v.Invariant, v.Detail = InvDraftRowForged, why
			rep.DraftRowsForged++
			rep.addViolation(v)
			continue // what it says of its run is nobody's word
		}
		if d.Signature != "" && c.WorkflowType != DraftWorkflowType {
			v.Invariant, v.Detail = InvDraftRowForeignRun, fmt.Sprintf("written for a run of type %q, not %s", c.WorkflowType, DraftWorkflowType)
			rep.DraftRowsForeignRun++
			rep.addViolation(v)
		}
		if opts.CheckDraftTotal == nil {
			continue
		}
		why, err := opts.CheckDraftTotal(ctx, d)
		if err != nil {
			return fmt.Errorf("reconcile: re-derive the total of %s: %w", c.DraftOrderID, err)
		}
		if why != "" {
			v.Invariant, v.Detail = InvDraftTotalMismatch, why
			rep.DraftTotalsMismatched++
			rep.addViolation(v)
		}
	}
	return nil
}

// checkAuthors runs the authorship invariants with opts' keys.
func checkAuthors(ctx context.Context, pool *pgxpool.Pool, opts ReconcileOptions, rep *ReconcileReport) error {
	var since time.Time
	if err := pool.QueryRow(ctx, `SELECT since FROM evidence_row_signing`).Scan(&since); err != nil {
		return dbError("read since when rows are signed", err)
	}
	auth := authorship{keys: opts.RowKeys, since: since.UTC()}
	if err := checkEvidenceAuthors(ctx, pool, opts, auth, rep); err != nil {
		return err
	}
	return checkDraftAuthors(ctx, pool, opts, auth, rep)
}
