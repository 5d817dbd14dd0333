package commerce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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
	CreatedAt     time.Time
	ExpiresAt     time.Time
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
	// Insert writes d unless its scope already has a draft; inserted
	// reports which, and the returned draft is the one that holds the scope.
	Insert(ctx context.Context, d NewDraft) (stored StoredDraft, inserted bool, err error)
}

// PGDrafts is the DraftStore over the draft_orders table.
type PGDrafts struct {
	Pool *pgxpool.Pool
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

// Insert implements DraftStore. ON CONFLICT DO NOTHING on the scope's
// unique constraint settles concurrent inserts in the database: the loser
// reads the winner's row.
func (s PGDrafts) Insert(ctx context.Context, d NewDraft) (StoredDraft, bool, error) {
	total, err := json.Marshal(d.Total)
	if err != nil {
		return StoredDraft{}, false, fmt.Errorf("draft orders: encode total: %w", err)
	}
	tag, err := s.Pool.Exec(ctx, `INSERT INTO draft_orders (draft_order_id, user_id_hash, tool, idempotency_key, status,
			quote_id, quote_hash, currency, grand_total_minor, total, ship_to_country, ship_to_region, ship_to_postal,
			ship_to_sealed, ship_to_nonce, ship_to_key_id, correlation_id, workflow_id, run_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, 'open', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
		ON CONFLICT ON CONSTRAINT draft_orders_idempotency DO NOTHING`,
		d.DraftOrderID, d.Scope.UserIDHash, d.Scope.Tool, d.Scope.IdempotencyKey,
		d.Total.QuoteID, d.Total.QuoteHash, d.Total.Currency, d.Total.GrandTotal.Amount, total,
		d.ShipTo.Country, d.ShipTo.Region, d.ShipTo.PostalCode, d.ShipTo.Ciphertext, d.ShipTo.Nonce, d.ShipTo.KeyID,
		d.CorrelationID, d.WorkflowID, d.RunID, d.CreatedAt, d.ExpiresAt)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23")) {
			// Bad data or a violated check: retrying cannot help.
			return StoredDraft{}, false, &PermanentError{Err: fmt.Errorf("draft orders: insert: %w", err)}
		}
		return StoredDraft{}, false, fmt.Errorf("draft orders: insert: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return StoredDraft{DraftOrderID: d.DraftOrderID, Status: DraftStatusOpen, QuoteHash: d.Total.QuoteHash,
			GrandTotal: d.Total.GrandTotal, ExpiresAt: d.ExpiresAt}, true, nil
	}
	// The conflicting row is committed (the insert waited for it), so a
	// fresh statement sees it.
	got, err := s.Find(ctx, d.Scope)
	if err != nil {
		return StoredDraft{}, false, err
	}
	if got == nil {
		return StoredDraft{}, false, errors.New("draft orders: insert conflicted but no row holds the scope")
	}
	return *got, false, nil
}

// PermanentError marks a store failure that a retry cannot fix (the
// row was refused by a constraint); anything else is treated as transient.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

// Unwrap exposes the cause.
func (e *PermanentError) Unwrap() error { return e.Err }
