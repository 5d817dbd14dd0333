package codecserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// tokenPrefix marks cartwright staff tokens, so a leaked one is easy to
// recognise (and to mask) in logs and pastes.
const tokenPrefix = "cwst_"

// DevSecretReader is who a decode with the dev stack's shared secret is
// logged as.
const DevSecretReader = "dev-secret"

// Authenticator turns a bearer credential into the staff id it belongs to.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (staffID string, err error)
}

// ErrBadCredential: the token is unknown, expired, revoked, or its staff
// member is inactive. Callers answer 401 without saying which.
var ErrBadCredential = errors.New("codecserver: invalid staff credential")

// StaffTokens checks tokens against staff_tokens (only SHA-256 hashes are
// stored) joined with the staff table: an inactive member's tokens stop
// working at once. A non-empty DevSecret is accepted as well, for the dev
// stack only.
type StaffTokens struct {
	Pool      *pgxpool.Pool
	DevSecret string
}

// Authenticate implements Authenticator.
func (s StaffTokens) Authenticate(ctx context.Context, token string) (string, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return "", ErrBadCredential
	}
	if s.DevSecret != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.DevSecret)) == 1 {
		return DevSecretReader, nil
	}
	if !strings.HasPrefix(token, tokenPrefix) || s.Pool == nil {
		return "", ErrBadCredential
	}
	sum := sha256.Sum256([]byte(token))
	var staffID string
	err := s.Pool.QueryRow(ctx, `SELECT t.staff_id FROM staff_tokens t JOIN staff s USING (staff_id)
		WHERE t.token_sha256 = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND s.active`, sum[:]).Scan(&staffID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrBadCredential
	}
	if err != nil {
		return "", toolkit.Errorf(toolkit.UpstreamError, "check staff token: %v", err)
	}
	return staffID, nil
}

// MaxTokenLifetime bounds a staff token's lifetime: a token that never
// expires is a password nobody rotates (docs/support.md#staff-tokens).
const MaxTokenLifetime = 90 * 24 * time.Hour

// IssueToken creates a token for an active staff member, valid for ttl, and
// returns it: the only time it is ever seen in clear.
func IssueToken(ctx context.Context, pool *pgxpool.Pool, staffID, label string, ttl time.Duration) (string, error) {
	if ttl <= 0 || ttl > MaxTokenLifetime {
		return "", toolkit.Errorf(toolkit.InvalidArgument, "a staff token's lifetime must be positive and at most %s (got %s)", MaxTokenLifetime, ttl)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", toolkit.Errorf(toolkit.UpstreamError, "random token: %v", err)
	}
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	tag, err := pool.Exec(ctx, `INSERT INTO staff_tokens (token_sha256, staff_id, label, expires_at)
		SELECT $1, staff_id, $3, now() + $4::interval FROM staff WHERE staff_id = $2 AND active`,
		sum[:], staffID, label, fmt.Sprintf("%d milliseconds", ttl.Milliseconds()))
	if err != nil {
		return "", toolkit.Errorf(toolkit.UpstreamError, "store staff token: %v", err)
	}
	if tag.RowsAffected() != 1 {
		return "", toolkit.Errorf(toolkit.Forbidden, "%s is not an active staff member", staffID)
	}
	return token, nil
}

// RevokeTokens revokes every live token of a staff member and returns how
// many.
func RevokeTokens(ctx context.Context, pool *pgxpool.Pool, staffID string) (int64, error) {
	tag, err := pool.Exec(ctx, `UPDATE staff_tokens SET revoked_at = now() WHERE staff_id = $1 AND revoked_at IS NULL`, staffID)
	if err != nil {
		return 0, toolkit.Errorf(toolkit.UpstreamError, "revoke staff tokens: %v", err)
	}
	return tag.RowsAffected(), nil
}
