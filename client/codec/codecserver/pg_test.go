package codecserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/client/codec/codectest"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// Against the real tables: an expired or revoked staff token cannot sign
// in; a session dies with its token (revoked or expired), its staff
// member's deactivation, sign-out and its own expiry; the table holds only
// hashes.
func TestAttackStaffTokensAndSessionsInPostgres(t *testing.T) {
	pool := testenv.Postgres(t)
	// Tokens are issued and staff deactivated as the operators' issuing
	// role; the codec server (pool, the runtime role) only reads them.
	issuer := testenv.IssuerPool(t, pool.Config().ConnString())
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(time.Minute))
	defer cancel()
	auth := codecserver.StaffTokens{Pool: pool}
	h := codecserver.New(codecserver.Options{Codec: codectest.Codec(), Auth: auth, Sessions: codecserver.PGSessions{Pool: pool},
		Log: &fakeLog{}, Origins: []string{uiOrigin}})
	r := rig{h: h}
	login := func(token string) int {
		return r.from("192.0.2.9:1", http.MethodPost, "/codec/login", form(token), formHdr(nil))
	}
	decode := func(sess string) int {
		return r.from("192.0.2.9:1", http.MethodPost, "/codec/decode", `{"payloads":[]}`,
			map[string]string{"Cookie": codecserver.CookieName + "=" + sess, "Origin": uiOrigin})
	}
	issue := func(staff string, ttl time.Duration) string {
		tok, err := codecserver.IssueToken(ctx, issuer, staff, "pg test", ttl)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}

	if _, err := codecserver.IssueToken(ctx, issuer, "alice.support", "forever", 10*365*24*time.Hour); err == nil {
		t.Fatal("a ten-year staff token was issued")
	}

	// An expired token cannot sign in, with the page or as a bearer token.
	expired := issue("alice.support", time.Hour)
	// Time passing: no role but the superuser rewrites a token's expiry.
	testenv.AdminExec(t, pool, `UPDATE staff_tokens SET expires_at = now() - interval '1 second' WHERE label = 'pg test'`)
	if c := login(expired); c != http.StatusUnauthorized {
		t.Fatalf("sign-in with an expired token: %d", c)
	}
	if _, err := auth.Authenticate(ctx, expired); err == nil {
		t.Fatal("an expired token authenticated")
	}

	// A session ends with its token's revocation.
	tok := issue("alice.support", time.Hour)
	sess := r.signIn(t, tok)
	if c := decode(sess); c != http.StatusOK {
		t.Fatalf("decode with a live session: %d", c)
	}
	var stored int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM codec_sessions WHERE session_sha256 = sha256($1::bytea) AND staff_id = 'alice.support'`,
		[]byte(sess)).Scan(&stored); err != nil || stored != 1 {
		t.Fatalf("session row by its hash: %d %v", stored, err)
	}
	if n, err := codecserver.RevokeTokens(ctx, issuer, "alice.support"); err != nil || n == 0 {
		t.Fatalf("revoke: %d %v", n, err)
	}
	if c := decode(sess); c != http.StatusUnauthorized {
		t.Fatalf("decode with the session of a revoked token: %d", c)
	}

	// Sign-out revokes the session row.
	sess = r.signIn(t, issue("alice.support", time.Hour))
	if c := r.from("192.0.2.9:1", http.MethodPost, "/codec/logout", "", map[string]string{"Cookie": codecserver.CookieName + "=" + sess}); c != http.StatusOK {
		t.Fatalf("sign-out: %d", c)
	}
	if c := decode(sess); c != http.StatusUnauthorized {
		t.Fatalf("decode after sign-out: %d", c)
	}

	// The session's own expiry, and one never outlives its token.
	tok = issue("bob.compliance", time.Hour)
	sess = r.signIn(t, tok)
	var sessExp, tokExp time.Time
	if err := pool.QueryRow(ctx, `SELECT s.expires_at, t.expires_at FROM codec_sessions s JOIN staff_tokens t USING (token_sha256)
		WHERE s.session_sha256 = sha256($1::bytea)`, []byte(sess)).Scan(&sessExp, &tokExp); err != nil || sessExp.After(tokExp) {
		t.Fatalf("session expires %v, its token %v (%v)", sessExp, tokExp, err)
	}
	testenv.AdminExec(t, pool, `UPDATE codec_sessions SET expires_at = now() - interval '1 second' WHERE session_sha256 = sha256($1::bytea)`, []byte(sess))
	if c := decode(sess); c != http.StatusUnauthorized {
		t.Fatalf("decode with an expired session: %d", c)
	}

	// Deactivating the staff member ends their sessions at once.
	sess = r.signIn(t, issue("bob.compliance", time.Hour))
	if _, err := issuer.Exec(ctx, `UPDATE staff SET active = false WHERE staff_id = 'bob.compliance'`); err != nil {
		t.Fatal(err)
	}
	if c := decode(sess); c != http.StatusUnauthorized {
		t.Fatalf("decode with the session of a deactivated member: %d", c)
	}

	// A session row nobody opened through a token (written past the
	// runtime role's grants, which refuse it: migration 00231) signs no one
	// in: not without a token, not with an admin's token hash under
	// another member's name.
	carol := issue("carol.admin", time.Hour)
	forged := func(id, staff, tokenOf string) string {
		testenv.AdminExec(t, pool, `INSERT INTO codec_sessions (session_sha256, staff_id, token_sha256, expires_at)
			VALUES (sha256($1::bytea), $2, (SELECT token_sha256 FROM staff_tokens WHERE staff_id = $3 AND revoked_at IS NULL LIMIT 1),
			now() + interval '1 hour')`, []byte(id), staff, tokenOf)
		return id
	}
	for _, f := range []struct{ what, id, staff, tokenOf string }{
		{"an admin's session without a token", "cwss_" + strings.Repeat("A", 43), "carol.admin", ""},
		{"a support member's token under an admin's name", "cwss_" + strings.Repeat("B", 43), "carol.admin", "alice.support"},
	} {
		if f.tokenOf == "alice.support" {
			issue("alice.support", time.Hour)
		}
		if c := decode(forged(f.id, f.staff, f.tokenOf)); c != http.StatusUnauthorized {
			t.Errorf("decode with %s: %d, want 401", f.what, c)
		}
	}
	if c := decode(r.signIn(t, carol)); c != http.StatusOK {
		t.Fatalf("decode with the admin's own sign-in: %d", c)
	}
}
