package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// emptyDatabase creates a database with no schema at all (testenv's are
// migrated already), owned by the owner role, and returns the owner's DSN
// for it; it is dropped at cleanup.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()
	admin, err := pgx.Connect(ctx, testenv.AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "cw_test_empty_" + hex.EncodeToString(b)
	if err := testenv.EnsureRoles(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" OWNER "+testenv.OwnerRole); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
		defer cancel()
		if c, err := pgx.Connect(ctx, testenv.AdminDSN()); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	})
	return testenv.DSNAs(testenv.AdminDSN(), testenv.OwnerRole, name)
}

// TestMigrate: `starter migrate` brings an empty database to the schema the
// worker needs (what the Helm chart's Job runs), as the owner of
// CARTWRIGHT_PG_OWNER_DSN; again is a no-op; without an owner DSN it refuses
// (never migrating as the runtime role), and an unreachable database exits 2.
func TestMigrate(t *testing.T) {
	dsn := emptyDatabase(t)
	t.Setenv("CARTWRIGHT_PG_DSN", testenv.DSNAs(dsn, testenv.RuntimeRole, testenv.DatabaseOf(dsn)))
	t.Setenv("CARTWRIGHT_PG_OWNER_DSN", "")
	runCLI(t, "", "migrate").oneLineErr(t, "no owner DSN", exitCannot, "INVALID_ARGUMENT")
	t.Setenv("CARTWRIGHT_PG_OWNER_DSN", dsn)
	for i := 0; i < 2; i++ {
		var out struct {
			Migrated bool `json:"migrated"`
		}
		if r := jsonOut(t, &out, "migrate"); r.code != exitOK || !out.Migrated {
			t.Fatalf("run %d: exit %d %+v: %s", i, r.code, out, r.stderr)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Deadline(30*time.Second))
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, table := range []string{"evidence_snapshots", "draft_orders", "merchants", "catalog_products"} {
		var ok bool
		if err := c.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&ok); err != nil || !ok {
			t.Fatalf("table %s after migrate: %v %v", table, ok, err)
		}
	}
	t.Setenv("CARTWRIGHT_PG_OWNER_DSN", "postgres://nobody:nothing@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	runCLI(t, "", "migrate").oneLineErr(t, "unreachable database", exitCannot, "UPSTREAM_ERROR")
}
