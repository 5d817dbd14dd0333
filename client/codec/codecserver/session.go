package codecserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/toolkit"
)

// A browser's sign-in is a server-side session (docs/support.md#codec-server-sign-in):
// the cookie holds a random session id, never the staff token; the store
// keeps only the id's SHA-256, so a leaked table or log cannot be replayed,
// and a session can be revoked or left to expire on its own.
const (
	// SessionTTL is how long a browser sign-in lasts at most; a session
	// never outlives the staff token it was opened with.
	SessionTTL    = 12 * time.Hour
	sessionPrefix = "cwss_"
)

// Session is an open sign-in.
type Session struct {
	ID        string // the cookie's value: shown once, to the browser
	ExpiresAt time.Time
}

// Sessions stores browser sign-ins.
type Sessions interface {
	// Open starts a session for staffID, who signed in with token (its
	// expiry caps the session's).
	Open(ctx context.Context, staffID, token string) (Session, error)
	// Staff is the staff id of a live session; ErrBadCredential when the
	// id is unknown, revoked or expired, or its staff member is inactive.
	Staff(ctx context.Context, id string) (string, error)
	// Revoke ends a session (sign-out); revoking an unknown id is no error.
	Revoke(ctx context.Context, id string) error
}

// SessionRef is how logs name a session: a short hash of its id, enough
// to follow one sign-in through the log and useless as a credential.
func SessionRef(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "ss_" + hex.EncodeToString(sum[:6])
}

func newSessionID() (string, [32]byte, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", [32]byte{}, toolkit.Errorf(toolkit.UpstreamError, "random session id: %v", err)
	}
	id := sessionPrefix + base64.RawURLEncoding.EncodeToString(raw)
	return id, sha256.Sum256([]byte(id)), nil
}

// wellFormedSession refuses anything that is not one of our ids before a
// store is asked (a staff token pasted into the cookie, say).
func wellFormedSession(id string) bool {
	return strings.HasPrefix(id, sessionPrefix) && len(id) == len(sessionPrefix)+43
}

// PGSessions keeps sessions in codec_sessions, so every worker replica's
// codec server honours (and revokes) the same sign-ins.
type PGSessions struct {
	Pool *pgxpool.Pool
	// TTL defaults to SessionTTL.
	TTL time.Duration
}

// Open implements Sessions. A session opened with a staff token ends when
// the token does (its expiry caps the session's, and revoking the token
// revokes the session: see Staff); one opened with the dev stack's shared
// secret has no token row.
func (p PGSessions) Open(ctx context.Context, staffID, token string) (Session, error) {
	id, sum, err := newSessionID()
	if err != nil {
		return Session{}, err
	}
	ttl := p.TTL
	if ttl <= 0 {
		ttl = SessionTTL
	}
	// The database opens the session from the token itself and takes the
	// staff member from the token's row (migration 00231): the runtime role
	// may not write a session row, so it cannot sign anyone in. The dev
	// secret (no staff token) opens a session of DevSecretReader only.
	var staffToken *string
	if strings.HasPrefix(token, tokenPrefix) {
		staffToken = &token
	} else if staffID != DevSecretReader {
		return Session{}, ErrBadCredential
	}
	var got string
	var exp time.Time
	err = p.Pool.QueryRow(ctx, `SELECT r_staff_id, r_expires_at FROM codec_session_open($1, $2, $3)`,
		sum[:], staffToken, ttl.Seconds()).Scan(&got, &exp)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, ErrBadCredential // the token ended between its check and now
	}
	if err != nil {
		return Session{}, toolkit.Errorf(toolkit.UpstreamError, "store codec session: %v", err)
	}
	if got != staffID {
		return Session{}, ErrBadCredential
	}
	return Session{ID: id, ExpiresAt: exp}, nil
}

// Staff implements Sessions: the session must be live, the token it was
// opened with still valid, and its staff member active (a session of the
// dev secret's reader has neither).
func (p PGSessions) Staff(ctx context.Context, id string) (string, error) {
	if !wellFormedSession(id) {
		return "", ErrBadCredential
	}
	sum := sha256.Sum256([]byte(id))
	var staffID string
	err := p.Pool.QueryRow(ctx, `SELECT s.staff_id FROM codec_sessions s
		LEFT JOIN staff_tokens t ON t.token_sha256 = s.token_sha256 AND t.staff_id = s.staff_id
		LEFT JOIN staff m ON m.staff_id = s.staff_id
		WHERE s.session_sha256 = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
		  AND ((t.token_sha256 IS NOT NULL AND t.revoked_at IS NULL AND t.expires_at > now() AND m.active)
		    OR (s.token_sha256 IS NULL AND s.staff_id = $2))`, sum[:], DevSecretReader).Scan(&staffID)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrBadCredential
	}
	if err != nil {
		return "", toolkit.Errorf(toolkit.UpstreamError, "check codec session: %v", err)
	}
	return staffID, nil
}

// Revoke implements Sessions.
func (p PGSessions) Revoke(ctx context.Context, id string) error {
	sum := sha256.Sum256([]byte(id))
	if _, err := p.Pool.Exec(ctx, `UPDATE codec_sessions SET revoked_at = now()
		WHERE session_sha256 = $1 AND revoked_at IS NULL`, sum[:]); err != nil {
		return toolkit.Errorf(toolkit.UpstreamError, "revoke codec session: %v", err)
	}
	return nil
}

// MemorySessions keeps sessions in this process only: for tests and a
// single codec server without a database.
type MemorySessions struct {
	TTL time.Duration
	Now func() time.Time

	mu sync.Mutex
	m  map[[32]byte]memSession
}

type memSession struct {
	staff   string
	expires time.Time
}

func (m *MemorySessions) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Open implements Sessions.
func (m *MemorySessions) Open(_ context.Context, staffID, _ string) (Session, error) {
	id, sum, err := newSessionID()
	if err != nil {
		return Session{}, err
	}
	ttl := m.TTL
	if ttl <= 0 {
		ttl = SessionTTL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[[32]byte]memSession{}
	}
	now := m.now()
	for k, s := range m.m { // forget expired sessions as new ones come
		if !now.Before(s.expires) {
			delete(m.m, k)
		}
	}
	exp := now.Add(ttl)
	m.m[sum] = memSession{staff: staffID, expires: exp}
	return Session{ID: id, ExpiresAt: exp}, nil
}

// Staff implements Sessions.
func (m *MemorySessions) Staff(_ context.Context, id string) (string, error) {
	if !wellFormedSession(id) {
		return "", ErrBadCredential
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.m[sha256.Sum256([]byte(id))]
	if !ok || !m.now().Before(s.expires) {
		return "", ErrBadCredential
	}
	return s.staff, nil
}

// Revoke implements Sessions.
func (m *MemorySessions) Revoke(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, sha256.Sum256([]byte(id)))
	return nil
}
