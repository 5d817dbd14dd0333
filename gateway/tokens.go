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

// ErrUnknownToken is a token that is not in the table or was revoked.
var ErrUnknownToken = errors.New("unknown or revoked token")

// NewToken is what Create returns: the token, shown once, and its row.
type NewToken struct {
	Token string `json:"token"`
	Actor Actor  `json:"actor"`
}

// Create stores a new token for actor and returns it; only its hash stays.
// Zero budgets take the table's defaults.
func (t *Tokens) Create(ctx context.Context, a Actor) (NewToken, error) {
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
	err := t.pool.QueryRow(ctx, `
		INSERT INTO mcp_tokens (token_id, token_hash, actor_id, tenant, tools, calls_per_minute, bytes_per_minute)
		VALUES ($1, $2, $3, $4, $5, COALESCE(NULLIF($6, 0), 120), COALESCE(NULLIF($7, 0), 4194304))
		RETURNING calls_per_minute, bytes_per_minute`,
		a.TokenID, hashToken(token), a.ID, tenant, a.Tools, a.CallsPerMinute, a.BytesPerMinute,
	).Scan(&a.CallsPerMinute, &a.BytesPerMinute)
	if err != nil {
		return NewToken{}, fmt.Errorf("create token for %s: %w", a.ID, err)
	}
	return NewToken{Token: token, Actor: a}, nil
}

// Lookup finds the live actor of token. ErrUnknownToken for an unknown or
// revoked token; any other error is the database's.
func (t *Tokens) Lookup(ctx context.Context, token string) (Actor, error) {
	var (
		a      Actor
		tenant *string
	)
	err := t.pool.QueryRow(ctx, `
		SELECT token_id, actor_id, tenant, tools, calls_per_minute, bytes_per_minute
		FROM mcp_tokens WHERE token_hash = $1 AND revoked_at IS NULL`, hashToken(token),
	).Scan(&a.TokenID, &a.ID, &tenant, &a.Tools, &a.CallsPerMinute, &a.BytesPerMinute)
	if errors.Is(err, pgx.ErrNoRows) {
		return Actor{}, ErrUnknownToken
	}
	if err != nil {
		return Actor{}, err
	}
	if tenant != nil {
		a.Tenant = *tenant
	}
	return a, nil
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
