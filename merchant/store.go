package merchant

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Row is a merchant without its PII: the display name, contact e-mail and
// phone are never selected, so they cannot leak through this type.
type Row struct {
	MerchantID       string
	StripeAccountID  string
	OnboardingStatus string
	Country          string
	BusinessType     string
	Version          int64
	UpdatedAt        time.Time
}

// Store queries merchants. Every query runs in a read-only transaction with
// a statement timeout, so a mistake here can neither write nor hang a pool
// connection beyond the tool's budget (docs/tools.md#onboarding-tools:
// read-only).
type Store struct {
	pool             *pgxpool.Pool
	statementTimeout time.Duration
}

// NewStore reads merchants through pool.
func NewStore(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool, statementTimeout: time.Second}
}

const rowColumns = `m.merchant_id, coalesce(m.stripe_account_id, ''), m.onboarding_status,
	m.country, m.business_type, m.version, m.updated_at`

// ByID finds a merchant by its id; found is false when there is none.
func (s *Store) ByID(ctx context.Context, merchantID string) (Row, bool, error) {
	return s.one(ctx, `SELECT `+rowColumns+` FROM merchants m WHERE m.merchant_id = $1`, merchantID)
}

// BySession finds the merchant a live user session belongs to. Sessions are
// stored as SHA-256 hashes; an expired session finds nothing.
func (s *Store) BySession(ctx context.Context, sessionID string) (Row, bool, error) {
	return s.one(ctx, `SELECT `+rowColumns+` FROM merchant_sessions ms
		JOIN merchants m ON m.merchant_id = ms.merchant_id
		WHERE ms.session_hash = $1 AND ms.expires_at > now()`, SessionHash(sessionID))
}

// ByStripeAccount finds the merchant that owns a connected account; the
// webhook receiver uses it to route Stripe events to a workflow.
func (s *Store) ByStripeAccount(ctx context.Context, accountID string) (Row, bool, error) {
	return s.one(ctx, `SELECT `+rowColumns+` FROM merchants m WHERE m.stripe_account_id = $1`, accountID)
}

// SessionHash is how a session id is stored and looked up.
func SessionHash(sessionID string) []byte {
	sum := sha256.Sum256([]byte(sessionID))
	return sum[:]
}

func (s *Store) one(ctx context.Context, query string, arg any) (Row, bool, error) {
	var r Row
	found := false
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", s.statementTimeout.Milliseconds())); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, query, arg).Scan(&r.MerchantID, &r.StripeAccountID, &r.OnboardingStatus,
			&r.Country, &r.BusinessType, &r.Version, &r.UpdatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return nil
	})
	if err != nil {
		return Row{}, false, err
	}
	return r, found, nil
}
