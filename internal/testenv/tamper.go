package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SuperExec runs sql with triggers disabled on pool's database, as a
// superuser tampering with the append-only tables would. It connects as the
// test cluster's superuser: pool itself is the runtime role's, which may do
// none of this (docs/evidence.md#database-roles).
func SuperExec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	adminExec(t, pool, true, sql, args...)
}

// AdminExec runs sql on pool's database as the test cluster's superuser,
// triggers on: what an operator provisioning rows the service only reads
// does, such as a merchant (the runtime role reads merchants under
// row-level security, docs/mcp.md#tenants, and never inserts them).
func AdminExec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	adminExec(t, pool, false, sql, args...)
}

func adminExec(t testing.TB, pool *pgxpool.Pool, noTriggers bool, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, AdminDSNFor(pool.Config().ConnString()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if noTriggers {
		if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("as admin %q: %v", sql, err)
	}
}
