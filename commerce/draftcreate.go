package commerce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cartwright-dev/cartwright/evidence"
)

// CreateOutcome says what DraftStore.Create did.
type CreateOutcome string

// Create's outcomes.
const (
	// CreateInserted: the draft is new; the audit is closed success.
	CreateInserted CreateOutcome = "inserted"
	// CreateReplayed: the scope already held a draft for the same quote
	// hash (a repeat, or a concurrent call that won); the audit is closed
	// success with replayed=true and Draft is the stored draft.
	CreateReplayed CreateOutcome = "replayed"
	// CreateConflict: the scope holds a draft for another quote hash;
	// nothing was written and Draft is the stored draft.
	CreateConflict CreateOutcome = "conflict"
	// CreateRefused: the correlation id's audit row is failed or another
	// tool's (Audit names it); nothing was written.
	CreateRefused CreateOutcome = "refused"
)

// Created is what DraftStore.Create reports.
type Created struct {
	Outcome CreateOutcome
	// Draft is the draft that holds the scope (zero when refused).
	Draft StoredDraft
	// Audit is the correlation id's two-phase row after the write.
	Audit evidence.AtomicResult
}

// Create implements DraftStore with the database function
// draft_order_create (migration 00090): the audit row and the draft in one
// statement, so one round trip and one transaction where the two-phase
// audit used to take four (docs/evidence.md#one-transaction). A refused
// constraint (bad data) is a PermanentError; anything else, including the
// serialization failure the function raises when it loses a race to another
// attempt of the same call, is transient and rolled back whole.
func (s PGDrafts) Create(ctx context.Context, d NewDraft, a evidence.TwoPhaseRow) (Created, error) {
	total, err := json.Marshal(d.Total)
	if err != nil {
		return Created{}, fmt.Errorf("draft orders: encode total: %w", err)
	}
	var c Created
	var outcome, auditStatus string
	var expires *time.Time // NULL when refused
	err = s.Pool.QueryRow(ctx, `SELECT r_outcome, r_audit_id, r_audit_status, r_audit_tool, r_audit_closed,
			r_draft_order_id, r_status, r_quote_hash, r_grand_total_minor, r_currency, r_expires_at
		FROM draft_order_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
			$19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)`,
		a.CorrelationID, a.Tool, a.UserIDHash, a.ActorType, a.Action, a.Reason, a.PayloadSHA, a.WorkflowID, a.RunID,
		a.ActivityID, a.Refs,
		d.DraftOrderID, d.Scope.UserIDHash, d.Scope.Tool, d.Scope.IdempotencyKey, d.Total.QuoteID, d.Total.QuoteHash,
		d.Total.Currency, d.Total.GrandTotal.Amount, total, d.ShipTo.Country, d.ShipTo.Region, d.ShipTo.PostalCode,
		d.ShipTo.Ciphertext, d.ShipTo.Nonce, d.ShipTo.KeyID, d.CorrelationID, d.WorkflowID, d.RunID,
		d.CreatedAt, d.ExpiresAt).
		Scan(&outcome, &c.Audit.AuditID, &auditStatus, &c.Audit.Tool, &c.Audit.Closed,
			&c.Draft.DraftOrderID, &c.Draft.Status, &c.Draft.QuoteHash, &c.Draft.GrandTotal.Amount,
			&c.Draft.GrandTotal.Currency, &expires)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23")) {
			// Bad data or a violated check: retrying cannot help.
			return Created{}, &PermanentError{Err: fmt.Errorf("draft orders: create: %w", err)}
		}
		return Created{}, fmt.Errorf("draft orders: create: %w", err)
	}
	c.Outcome = CreateOutcome(outcome)
	c.Audit.Status = evidence.AuditStatus(auditStatus)
	if expires != nil {
		c.Draft.ExpiresAt = expires.UTC()
	}
	return c, nil
}
