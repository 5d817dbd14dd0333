package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SuperExec runs sql on a connection of pool with triggers disabled, as a
// superuser tampering with the append-only tables would (pool must be a
// superuser's, as Postgres's is).
func SuperExec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(context.Background(), "SET session_replication_role = origin") }()
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("tamper %q: %v", sql, err)
	}
}
