package commerce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/evidence"
)

// DraftScope is the idempotency scope of a draft order
// (docs/envelope.md#idempotency).
type DraftScope struct {
	// UserIDHash is evidence.HashUserID of the user: no user id in clear.
	UserIDHash     string
	Tool           string
	IdempotencyKey string
}

// SealedAddress is a shipping address encrypted for storage, with the
// coarse location kept in clear.
type SealedAddress struct {
	Country    string
	Region     string
	PostalCode string
	Ciphertext []byte
	Nonce      []byte
	KeyID      string
}

// NewDraft is a draft order to insert.
type NewDraft struct {
	Scope         DraftScope
	DraftOrderID  string
	Total         Total
	ShipTo        SealedAddress
	CorrelationID string
	WorkflowID    string
	RunID         string
	// WorkflowType is the writing run's type (the activity's info), signed
	// with the row.
	WorkflowType string
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

// StoredDraft is what a lookup returns: enough to answer a replay.
type StoredDraft struct {
	DraftOrderID string
	Status       string
	QuoteHash    string
	GrandTotal   Money
	ExpiresAt    time.Time
}

// DraftStore persists draft orders exactly once per scope. The built-in
// one is PostgreSQL; an order-management service can replace it.
type DraftStore interface {
	// Find returns the draft of scope, or nil when there is none.
	Find(ctx context.Context, scope DraftScope) (*StoredDraft, error)
	// Create writes d unless its scope already has a draft, and closes the
	// call's two-phase audit (audit) as success in the same transaction
	// (docs/evidence.md#one-transaction). It writes nothing when audit's
	// correlation id has a row that is failed or another tool's, or when
	// the scope holds a draft for another quote hash; the result says
	// which. It is an evidence.AtomicWrite for the audit log.
	Create(ctx context.Context, d NewDraft, audit evidence.TwoPhaseRow) (Created, error)
}

// PGDrafts is the DraftStore over the draft_orders table. Signer signs
// every row it writes (docs/evidence.md#draft-row-signatures).
type PGDrafts struct {
	Pool   *pgxpool.Pool
	Signer *evidence.RowSigner
}

// Find implements DraftStore.
func (s PGDrafts) Find(ctx context.Context, scope DraftScope) (*StoredDraft, error) {
	var d StoredDraft
	err := s.Pool.QueryRow(ctx, `SELECT draft_order_id, status, quote_hash, grand_total_minor, currency, expires_at
		FROM draft_orders WHERE user_id_hash = $1 AND tool = $2 AND idempotency_key = $3`,
		scope.UserIDHash, scope.Tool, scope.IdempotencyKey).
		Scan(&d.DraftOrderID, &d.Status, &d.QuoteHash, &d.GrandTotal.Amount, &d.GrandTotal.Currency, &d.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("draft orders: find: %w", err)
	}
	d.ExpiresAt = d.ExpiresAt.UTC()
	return &d, nil
}

// PermanentError marks a store failure that a retry cannot fix (the
// row was refused by a constraint); anything else is treated as transient.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

// Unwrap exposes the cause.
func (e *PermanentError) Unwrap() error { return e.Err }
