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

// AllTenants is the scope of a caller with platform-wide reach (backends,
// staff, an agent without a tenant, the webhook receiver). It is never a
// tenant's id (ids start with a letter).
const AllTenants = "*"

// ErrOtherTenant is a merchant (or a session's merchant) outside the
// caller's tenant: it may exist, and the caller may not know.
var ErrOtherTenant = errors.New("the merchant is not one of this tenant's")

// inTenant keeps a query to the transaction's tenant in Go's own SQL,
// whoever runs it; row-level security does the same in PostgreSQL for
// every query, this one or a buggy one (and a superuser, whom row-level
// security never binds, still gets the first).
const inTenant = `(current_setting('cartwright.tenant') = '*' OR m.tenant = current_setting('cartwright.tenant'))`

const rowColumns = `m.merchant_id, coalesce(m.stripe_account_id, ''), m.onboarding_status,
	m.country, m.business_type, m.version, m.updated_at`

// ByID finds a merchant of tenant by its id (tenant: a tenant's id, or
// AllTenants); found is false when tenant has none by that id.
func (s *Store) ByID(ctx context.Context, tenant, merchantID string) (Row, bool, error) {
	return s.one(ctx, tenant, `SELECT `+rowColumns+` FROM merchants m WHERE m.merchant_id = $1 AND `+inTenant, merchantID)
}

// BySession finds the merchant a live user session belongs to. Sessions are
// stored as SHA-256 hashes; an expired session finds nothing. A live
// session of a merchant outside tenant is ErrOtherTenant.
func (s *Store) BySession(ctx context.Context, tenant, sessionID string) (Row, bool, error) {
	var r Row
	found := false
	err := s.inScope(ctx, tenant, func(tx pgx.Tx) error {
		// The session table has no tenant: the join to merchants, which
		// row-level security filters, says whether the merchant is ours.
		var visible bool
		err := tx.QueryRow(ctx, `SELECT m.merchant_id IS NOT NULL, coalesce(m.merchant_id, ''), coalesce(m.stripe_account_id, ''),
			coalesce(m.onboarding_status, ''), coalesce(m.country, ''), coalesce(m.business_type, ''), coalesce(m.version, 0),
			coalesce(m.updated_at, 'epoch')
			FROM merchant_sessions ms LEFT JOIN merchants m ON m.merchant_id = ms.merchant_id AND `+inTenant+`
			WHERE ms.session_hash = $1 AND ms.expires_at > now()`, SessionHash(sessionID)).Scan(&visible, &r.MerchantID,
			&r.StripeAccountID, &r.OnboardingStatus, &r.Country, &r.BusinessType, &r.Version, &r.UpdatedAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		case !visible:
			return ErrOtherTenant
		}
		found = true
		return nil
	})
	if err != nil {
		return Row{}, false, err
	}
	return r, found, nil
}

// ByStripeAccount finds the merchant of tenant that owns a connected
// account; the webhook receiver (AllTenants) uses it to route Stripe
// events to a workflow, the Stripe tools to keep a tenant to its own.
func (s *Store) ByStripeAccount(ctx context.Context, tenant, accountID string) (Row, bool, error) {
	return s.one(ctx, tenant, `SELECT `+rowColumns+` FROM merchants m WHERE m.stripe_account_id = $1 AND `+inTenant, accountID)
}

// SessionHash is how a session id is stored and looked up.
func SessionHash(sessionID string) []byte {
	sum := sha256.Sum256([]byte(sessionID))
	return sum[:]
}

// inScope runs fn in a read-only transaction with the statement timeout
// and the tenant setting row-level security reads
// (internal/db/migrations/00111_merchant_tenants.sql): SET LOCAL, so it
// ends with the transaction and never reaches the pool's next user.
func (s *Store) inScope(ctx context.Context, tenant string, fn func(pgx.Tx) error) error {
	if tenant == "" {
		return errors.New("merchant: a tenant or AllTenants is required")
	}
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('statement_timeout', $1, true), set_config('cartwright.tenant', $2, true)`,
			fmt.Sprint(s.statementTimeout.Milliseconds()), tenant); err != nil {
			return err
		}
		return fn(tx)
	})
}

func (s *Store) one(ctx context.Context, tenant, query string, arg any) (Row, bool, error) {
	var r Row
	found := false
	err := s.inScope(ctx, tenant, func(tx pgx.Tx) error {
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
