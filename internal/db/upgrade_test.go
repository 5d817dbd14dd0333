package db_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"

	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// The role split's migrations (00100_runtime_role.sql and its range): a
// database made before them holds every other migration, lower and higher
// numbers alike (branches number in ranges of their own), all applied by
// the worker as cartwright.
const firstRoles, lastRoles = 100, 109

// formatOneDropped is the migration that drops the format-1 appends the
// role split alters: it came after every build that could have made a
// database without the split, so such a database never holds it (it and
// what follows are applied with the upgrade).
const formatOneDropped = 250

// TestLegacyDatabaseUpgrade follows docs/evidence.md#creating-the-roles-and-upgrading-a-database
// on a private cluster: a database migrated the old way, by the runtime
// login, lets that login disable the evidence trigger; after REASSIGN
// OWNED and `starter migrate` as the owner (which applies the role split
// out of order, below migrations already there) it cannot, owns nothing,
// and still reads and writes what it needs, tables of later migrations
// included.
func TestLegacyDatabaseUpgrade(t *testing.T) {
	testenv.Integration(t)
	cluster := testenv.StartPrivateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, cluster.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if err := testenv.EnsureRoles(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE legacy OWNER "+testenv.RuntimeRole); err != nil {
		t.Fatal(err)
	}
	runtimeDSN := testenv.DSNAs(cluster.DSN("legacy"), testenv.RuntimeRole, "legacy")
	migrateAllBut(ctx, t, runtimeDSN, firstRoles, lastRoles)

	rt, err := pgx.Connect(ctx, runtimeDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	if _, err := rt.Exec(ctx, "ALTER TABLE evidence_snapshots DISABLE TRIGGER evidence_snapshots_append_only"); err != nil {
		t.Fatalf("before the upgrade the runtime login owns the table (the flaw being fixed), yet: %v", err)
	}
	if _, err := rt.Exec(ctx, "ALTER TABLE evidence_snapshots ENABLE TRIGGER evidence_snapshots_append_only"); err != nil {
		t.Fatal(err)
	}

	// The upgrade, as documented: a superuser in that database, then
	// `starter migrate` as the owner.
	super, err := pgx.Connect(ctx, cluster.DSN("legacy"))
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	if _, err := super.Exec(ctx, "REASSIGN OWNED BY cartwright TO cartwright_owner"); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, testenv.DSNAs(cluster.DSN("legacy"), testenv.OwnerRole, "legacy")); err != nil {
		t.Fatalf("migrate as the owner after REASSIGN OWNED: %v", err)
	}

	if _, err := rt.Exec(ctx, "ALTER TABLE evidence_snapshots DISABLE TRIGGER evidence_snapshots_append_only"); err == nil {
		t.Fatal("after the upgrade the runtime login still disables the evidence trigger")
	}
	var owned int
	if err := super.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_class WHERE relowner = 'cartwright'::regrole)
		+ (SELECT count(*) FROM pg_proc WHERE proowner = 'cartwright'::regrole)
		+ (SELECT count(*) FROM pg_database WHERE datdba = 'cartwright'::regrole)`).Scan(&owned); err != nil || owned != 0 {
		t.Fatalf("objects still owned by the runtime login: %d (%v)", owned, err)
	}
	var newest string
	if err := super.QueryRow(ctx, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'goose_db_version' ORDER BY c.oid DESC LIMIT 1`).Scan(&newest); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SELECT count(*) FROM evidence_snapshots`, `DELETE FROM draft_orders WHERE false`,
		`SELECT count(*) FROM ` + newest} {
		if _, err := rt.Exec(ctx, q); err != nil {
			t.Fatalf("the runtime login lost what it needs: %s: %v", q, err)
		}
	}
}

// migrateAllBut applies every migration outside [from, to], in order, as
// the old worker did.
func migrateAllBut(ctx context.Context, t *testing.T, dsn string, from, to int64) {
	t.Helper()
	sqlDB, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, os.DirFS("migrations"))
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range p.ListSources() {
		if src.Version >= from && src.Version <= to || src.Version >= formatOneDropped {
			continue
		}
		if _, err := p.ApplyVersion(ctx, src.Version, true); err != nil {
			t.Fatalf("apply %d: %v", src.Version, err)
		}
	}
}
