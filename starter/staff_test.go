package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/client/codec/codecserver"
	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// TestStaffTokens issues a codec-server token from the CLI, checks the codec
// server's authenticator accepts it for that staff member, revokes it, and
// refuses tokens for unknown or inactive staff. Tokens are issued as the
// issuing role only: with the runtime role's DSN alone (what the worker and
// the gateway hold) the command refuses, and pointed at the runtime role
// PostgreSQL refuses the write (docs/evidence.md#database-roles).
func TestStaffTokens(t *testing.T) {
	dsn := testenv.Database(t)
	t.Setenv("CARTWRIGHT_PG_DSN", dsn)
	t.Setenv("CARTWRIGHT_PG_ISSUER_DSN", "")
	runCLI(t, "", "staff", "token", "--staff", "carol.admin").oneLineErr(t, "no issuer DSN", 2, "INVALID_ARGUMENT", "CARTWRIGHT_PG_ISSUER_DSN")
	t.Setenv("CARTWRIGHT_PG_ISSUER_DSN", dsn)
	runCLI(t, "", "staff", "token", "--staff", "carol.admin").oneLineErr(t, "the runtime role as issuer", 2, "UPSTREAM_ERROR", "permission denied")
	runCLI(t, "", "mcp", "token", "create", "--actor", "rogue-agent").oneLineErr(t, "the runtime role as MCP issuer", 2, "permission denied")
	t.Setenv("CARTWRIGHT_PG_ISSUER_DSN", testenv.IssuerDSNFor(dsn))
	r := runCLI(t, "", "staff", "token", "--staff", "alice.support", "--expires-in", "1h")
	if r.code != 0 {
		t.Fatalf("staff token: %d %s", r.code, r.stderr)
	}
	tok := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(tok, "cwst_") {
		t.Fatalf("token %q", tok)
	}
	auth := codecserver.StaffTokens{Pool: openPool(t, dsn)}
	if who, err := auth.Authenticate(context.Background(), tok); err != nil || who != "alice.support" {
		t.Fatalf("authenticate = %q, %v", who, err)
	}
	if _, err := auth.Authenticate(context.Background(), tok+"x"); !errors.Is(err, codecserver.ErrBadCredential) {
		t.Fatalf("a wrong token: %v", err)
	}
	// Staff tokens expire: a lifetime beyond the cap is refused.
	runCLI(t, "", "staff", "token", "--staff", "alice.support", "--expires-in", "2400h").oneLineErr(t, "a 100-day token", 2, "INVALID_ARGUMENT", "at most")
	runCLI(t, "", "staff", "token", "--staff", "dave.former").oneLineErr(t, "inactive staff", 1, "FORBIDDEN", "dave.former")
	runCLI(t, "", "staff", "token", "--staff", "nobody.here").oneLineErr(t, "unknown staff", 1, "FORBIDDEN")
	if r := runCLI(t, "", "staff", "revoke", "--staff", "alice.support"); r.code != 0 || !strings.Contains(r.stdout, "1 token(s)") {
		t.Fatalf("revoke: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if _, err := auth.Authenticate(context.Background(), tok); !errors.Is(err, codecserver.ErrBadCredential) {
		t.Fatalf("a revoked token: %v", err)
	}
}

func openPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
