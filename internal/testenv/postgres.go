package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/internal/db"
)

// AdminDSN is the superuser connection used to create per-test databases.
func AdminDSN() string {
	if v := os.Getenv("CARTWRIGHT_TEST_PG_DSN"); v != "" {
		return v
	}
	return "postgres://cartwright_admin:cartwright_admin@127.0.0.1:5432/postgres?sslmode=disable"
}

// Integration skips t under -short and otherwise marks it as needing the stack.
func Integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the stack `make test` starts")
	}
}

// Database creates an empty database for t, migrated as the owner role, and
// returns the runtime role's DSN for it (docs/evidence.md#database-roles):
// tests run with the rights the worker has, no more. It is dropped when the
// test ends. SuperExec and AdminDSNFor reach it as a superuser.
func Database(t testing.TB) string {
	t.Helper()
	Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	name := "cw_test_" + randomHex(6)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, AdminDSN())
		if err != nil {
			return
		}
		defer c.Close(ctx)
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	dsn, err := PrepareDatabase(ctx, AdminDSN(), name)
	if err != nil {
		t.Fatalf("testenv: %v — run `make test` or start the stack", err)
	}
	return dsn
}

// AdminDSNFor is the superuser's DSN for the database dsn connects to.
func AdminDSNFor(dsn string) string {
	u, err := url.Parse(AdminDSN())
	if err != nil {
		panic(fmt.Sprintf("testenv: unparseable admin DSN: %v", err))
	}
	u.Path = "/" + DatabaseOf(dsn)
	return u.String()
}

// OwnerDSNFor is the owner role's DSN for the database dsn connects to.
func OwnerDSNFor(dsn string) string { return DSNAs(AdminDSN(), OwnerRole, DatabaseOf(dsn)) }

// IssuerDSNFor is the issuing role's DSN for the database dsn connects to:
// what `starter staff …` and `starter mcp token …` connect with
// (docs/evidence.md#database-roles).
func IssuerDSNFor(dsn string) string { return DSNAs(AdminDSN(), IssuerRole, DatabaseOf(dsn)) }

// IssuerPool is a pool on the database of dsn as the issuing role, closed
// at cleanup: how a test issues staff and MCP tokens, as an operator would.
func IssuerPool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := db.Open(context.Background(), IssuerDSNFor(dsn))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Postgres returns a pool on a fresh migrated database, closed at cleanup.
func Postgres(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := Database(t)
	pool, err := db.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparseable DSN)"
	}
	return u.Redacted()
}
