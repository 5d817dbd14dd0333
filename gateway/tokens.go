package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// Actor is who a bearer token speaks for: always an agent
// (docs/envelope.md#actors, docs/mcp.md#callers).
type Actor struct {
	ID      string `json:"id"`
	TokenID string `json:"token_id"`
	// Tenant, when set, is the user the agent acts for.
	Tenant string `json:"tenant,omitempty"`
	// Tools is the allow-list; empty allows every tool.
	Tools          []string `json:"tools,omitempty"`
	CallsPerMinute int      `json:"calls_per_minute"`
	BytesPerMinute int      `json:"bytes_per_minute"`
	// ExpiresAt, when set, ends the token (docs/mcp.md#tokens).
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Allows reports whether the actor may call tool.
func (a Actor) Allows(tool string) bool { return len(a.Tools) == 0 || slices.Contains(a.Tools, tool) }

// UserID is the envelope's user_id for the actor's calls: the tenant, else
// the agent itself. It never comes from what the caller sends.
func (a Actor) UserID() string {
	if a.Tenant != "" {
		return a.Tenant
	}
	return a.ID
}

// Envelope actor of the tool call.
func (a Actor) envelopeActor() toolkit.Actor {
	return toolkit.Actor{Type: toolkit.ActorAgent, ID: a.ID}
}

// Tokens is the token table.
type Tokens struct{ pool *pgxpool.Pool }

// NewTokens uses pool (migrated: internal/db/migrations/00050).
func NewTokens(pool *pgxpool.Pool) *Tokens { return &Tokens{pool: pool} }

// ErrUserIDClash refuses a token whose calls would share a user id with
// another kind of token's: a tenant-less agent named like a tenant.
var ErrUserIDClash = errors.New("user id clash")

// ErrUnknownToken is a token that is not in the table or was revoked.
var ErrUnknownToken = errors.New("unknown or revoked token")

// NewToken is what Create returns: the token, shown once, and its row.
type NewToken struct {
	Token string `json:"token"`
	Actor Actor  `json:"actor"`
}

// Create stores a new token for actor and returns it; only its hash stays.
// Zero budgets take the table's defaults; a.ExpiresAt, when set, ends it.
// A tenant outside the tenants' namespace (ErrTenantName) and an
// allow-list naming a tool no agent may call (ErrNotGrantable) are
// refused.
func (t *Tokens) Create(ctx context.Context, a Actor) (NewToken, error) {
	if err := checkTenant(a.Tenant); err != nil {
		return NewToken{}, err
	}
	if err := checkGrant(a.Tools); err != nil {
		return NewToken{}, err
	}
	secret := make([]byte, 32)
	id := make([]byte, 8)
	_, _ = rand.Read(secret)
	_, _ = rand.Read(id)
	token := "cwt_" + hex.EncodeToString(secret)
	a.TokenID = "mt_" + hex.EncodeToString(id)
	if a.Tools == nil {
		a.Tools = []string{}
	}
	var tenant *string
	if a.Tenant != "" {
		tenant = &a.Tenant
	}
	// A tenant-less agent's calls have its own id as user_id, a tenant's
	// agents the tenant's: an agent named like a tenant would share the
	// tenant's draft orders and tool calls (docs/mcp.md#tenants). The lock
	// makes the check and the insert one step against concurrent creates.
	err := pgx.BeginTxFunc(ctx, t.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('mcp_tokens user ids'))`); err != nil {
			return err
		}
		var clash bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mcp_tokens WHERE
			($1::text IS NULL AND tenant = $2) OR ($1::text IS NOT NULL AND tenant IS NULL AND actor_id = $1))`,
			tenant, a.ID).Scan(&clash); err != nil {
			return err
		}
		if clash {
			return fmt.Errorf("%w: an agent without a tenant and a tenant would share the user id %s", ErrUserIDClash, a.UserID())
		}
		return tx.QueryRow(ctx, `
			INSERT INTO mcp_tokens (token_id, token_hash, actor_id, tenant, tools, calls_per_minute, bytes_per_minute, expires_at)
			VALUES ($1, $2, $3, $4, $5, COALESCE(NULLIF($6, 0), 120), COALESCE(NULLIF($7, 0), 4194304), $8)
			RETURNING calls_per_minute, bytes_per_minute`,
			a.TokenID, hashToken(token), a.ID, tenant, a.Tools, a.CallsPerMinute, a.BytesPerMinute, a.ExpiresAt,
		).Scan(&a.CallsPerMinute, &a.BytesPerMinute)
	})
	if err != nil {
		return NewToken{}, fmt.Errorf("create token for %s: %w", a.ID, err)
	}
	return NewToken{Token: token, Actor: a}, nil
}

// lastUseEvery is how stale last_used_at may get before a lookup writes it.
const lastUseEvery = time.Minute

// Lookup finds the live actor of token. ErrUnknownToken for an unknown,
// revoked or expired token; any other error is the database's.
func (t *Tokens) Lookup(ctx context.Context, token string) (Actor, error) {
	var (
		a        Actor
		tenant   *string
		lastUsed *time.Time
		now      time.Time
	)
	err := t.pool.QueryRow(ctx, `
		SELECT token_id, actor_id, tenant, tools, calls_per_minute, bytes_per_minute, expires_at, last_used_at, now()
		FROM mcp_tokens
		WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`, hashToken(token),
	).Scan(&a.TokenID, &a.ID, &tenant, &a.Tools, &a.CallsPerMinute, &a.BytesPerMinute, &a.ExpiresAt, &lastUsed, &now)
	if errors.Is(err, pgx.ErrNoRows) {
		return Actor{}, ErrUnknownToken
	}
	if err != nil {
		return Actor{}, err
	}
	if tenant != nil {
		a.Tenant = *tenant
	}
	if lastUsed == nil || now.Sub(*lastUsed) >= lastUseEvery {
		// Best effort: a lost update only makes "last use" a minute older.
		_, _ = t.pool.Exec(ctx, `UPDATE mcp_tokens SET last_used_at = now() WHERE token_id = $1`, a.TokenID)
	}
	return a, nil
}

// TokenInfo is one row of `starter mcp token list`: never the token, nor
// its hash.
type TokenInfo struct {
	TokenID   string     `json:"token_id"`
	ActorID   string     `json:"actor_id"`
	Tenant    string     `json:"tenant,omitempty"`
	Tools     []string   `json:"tools"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	LastUsed  *time.Time `json:"last_used_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// State is live, expired or revoked.
	State string `json:"state"`
}

// List returns every token, newest first; all=false keeps only live ones.
func (t *Tokens) List(ctx context.Context, all bool) ([]TokenInfo, error) {
	rows, err := t.pool.Query(ctx, `
		SELECT token_id, actor_id, coalesce(tenant, ''), tools, created_at, expires_at, last_used_at, revoked_at,
		       CASE WHEN revoked_at IS NOT NULL THEN 'revoked'
		            WHEN expires_at IS NOT NULL AND expires_at <= now() THEN 'expired'
		            ELSE 'live' END
		FROM mcp_tokens
		WHERE $1 OR (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()))
		ORDER BY created_at DESC, token_id`, all)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (TokenInfo, error) {
		var ti TokenInfo
		err := r.Scan(&ti.TokenID, &ti.ActorID, &ti.Tenant, &ti.Tools, &ti.CreatedAt, &ti.ExpiresAt, &ti.LastUsed, &ti.RevokedAt, &ti.State)
		return ti, err
	})
}

// Revoke ends a token now; it reports whether a live token was revoked.
func (t *Tokens) Revoke(ctx context.Context, tokenID string) (bool, error) {
	tag, err := t.pool.Exec(ctx, `UPDATE mcp_tokens SET revoked_at = $2 WHERE token_id = $1 AND revoked_at IS NULL`,
		tokenID, time.Now())
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// hashToken is the stored form: tokens are 256-bit random, so a plain
// SHA-256 cannot be reversed by guessing.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
