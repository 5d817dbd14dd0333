package db_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// appendOne writes an evidence row as the runtime role through
// evidence_append_row, and finds the format-1 appends gone (migration
// 00250): the append functions are the only ways the runtime may add
// evidence (docs/evidence.md#database-roles).
func appendOne(ctx context.Context, t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	_, err := pool.Exec(ctx, `SELECT * FROM evidence_append_row(42, jsonb_build_object('snapshot_id', 'ev_01J00000000000000000000000',
		'dedupe_key', 'dedupe-1', 'chain_key', 'wf-roles', 'tool', 'tool.x', 'tool_version', '1.0.0', 'build', 'build',
		'workflow_id', 'wf-roles', 'run_id', 'run-1', 'activity_id', '1', 'activity_type', 'Act', 'attempt', 1,
		'request_id', 'req-1', 'correlation_id', 'corr-0000000000000001', 'user_id_hash', 'uh_x', 'input_digest', 'sha256:in',
		'output', '{"step":1}'::jsonb, 'output_hash', 'sha256:'||repeat('a',64), 'ruleset_version', 'r1', 'ttl_seconds', 60,
		'status', 'ok', 'created_at', now(), 'trace_id', '', 'content_hash', 'sha256:'||repeat('c',64)))`)
	if err != nil {
		t.Fatalf("runtime role could not append evidence through evidence_append_row: %v", err)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_proc WHERE proname IN
		('evidence_append', 'evidence_append_batch', 'evidence_append_direct')`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d format-1 append functions left after migration 00250 (%v)", left, err)
	}
}

// TestRuntimeRoleCannotRewriteEvidence is the attack of an application that
// wants to rewrite its own evidence: as the runtime role it tries every way
// round the append-only triggers (disable them, drop them, replace their
// function, become the owner, skip triggers as replication does) and every
// direct write, and each is refused by a privilege check, not by a trigger
// it could have turned off. The row it wrote stays as it was.
func TestRuntimeRoleCannotRewriteEvidence(t *testing.T) {
	dsn := testenv.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	appendOne(ctx, t, pool)
	if _, err := pool.Exec(ctx, `INSERT INTO audit_events (correlation_id, two_phase, tool, user_id_hash, actor_type,
		action, reason, status, payload_sha, workflow_id, run_id, activity_id, finalized_at)
		VALUES ('corr-0000000000000002', false, 'tool.x', 'uh_x', 'agent', 'reject', 'r', 'success', '', 'wf', 'run', '1', now())`); err != nil {
		t.Fatalf("runtime role could not append an audit event: %v", err)
	}

	forbidden := []string{
		// The triggers themselves.
		`ALTER TABLE evidence_snapshots DISABLE TRIGGER evidence_snapshots_append_only`,
		`ALTER TABLE evidence_snapshots DISABLE TRIGGER ALL`,
		`ALTER TABLE audit_events DISABLE TRIGGER audit_events_guard`,
		`ALTER TABLE evidence_access_log DISABLE TRIGGER ALL`,
		`ALTER TABLE history_archive DISABLE TRIGGER ALL`,
		`DROP TRIGGER evidence_snapshots_append_only ON evidence_snapshots`,
		`CREATE OR REPLACE FUNCTION evidence_forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
		`CREATE TRIGGER sneak BEFORE INSERT ON draft_orders FOR EACH ROW EXECUTE FUNCTION evidence_forbid_change()`,
		`ALTER TABLE evidence_snapshots OWNER TO cartwright`,
		`SET session_replication_role = replica`,
		`SET ROLE cartwright_owner`,
		// Rewrites, deletions and forged rows.
		`UPDATE evidence_snapshots SET output = '{"step":2}'`,
		`DELETE FROM evidence_snapshots`,
		`TRUNCATE evidence_snapshots`,
		`INSERT INTO evidence_snapshots SELECT * FROM evidence_snapshots`,
		`UPDATE evidence_chain_heads SET last_seq = 0`,
		`DELETE FROM evidence_chain_heads`,
		`INSERT INTO evidence_chain_heads (chain_key, last_seq, last_hash) VALUES ('forged', 1, 'x')`,
		`UPDATE audit_events SET tool = 'forged'`,
		`UPDATE audit_events SET workflow_id = 'forged'`,
		`DELETE FROM audit_events`,
		`TRUNCATE audit_events`,
		`UPDATE evidence_access_log SET reason = 'forged'`,
		`DELETE FROM evidence_access_log`,
		`TRUNCATE evidence_access_log`,
		`UPDATE history_archive SET workflow_id = 'forged'`,
		`DELETE FROM history_archive_reads`,
		`TRUNCATE draft_orders`,
		// The schema.
		`DROP TABLE evidence_snapshots`,
		`ALTER TABLE evidence_snapshots ADD COLUMN sneak text`,
		`CREATE TABLE sneak (id int)`,
		`CREATE FUNCTION sneak() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
		`ALTER FUNCTION evidence_append_row(integer, jsonb) SECURITY INVOKER`,
		`CREATE OR REPLACE FUNCTION evidence_append_row(integer, jsonb) RETURNS SETOF record LANGUAGE sql AS 'SELECT NULL::record'`,
		`DROP FUNCTION evidence_append_rows(integer, jsonb)`,
		`DROP FUNCTION evidence_append_direct_row(integer, jsonb, text, jsonb, boolean)`,
		`ALTER TABLE evidence_snapshots ALTER COLUMN hash_format SET DEFAULT 2`,
		`DELETE FROM goose_db_version`,
	}
	for _, stmt := range forbidden {
		_, err := pool.Exec(ctx, stmt)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" || strings.Contains(pgErr.Message, "append-only") ||
			strings.Contains(pgErr.Message, "cannot change") {
			t.Errorf("as the runtime role %q: err %v, want a privilege refusal (SQLSTATE 42501, not a trigger's)", oneLine(stmt), err)
		}
	}

	var out string
	var n int
	if err := pool.QueryRow(ctx, `SELECT string_agg(DISTINCT output::text, ','), count(*) FROM evidence_snapshots`).
		Scan(&out, &n); err != nil || out != `{"step": 1}` || n != 1 {
		t.Fatalf("evidence after the attempts: %q, %d rows, %v; want the row unchanged", out, n, err)
	}
}

// TestRuntimeRoleGrants checks the schema against the rule of
// docs/evidence.md#a-new-table, whatever migrations add later: the runtime
// roles own nothing; no table lets them TRUNCATE or control triggers; an
// append-only table (one whose triggers refuse TRUNCATE) grants them neither
// UPDATE nor DELETE; a SECURITY DEFINER function pins its search_path.
func TestRuntimeRoleGrants(t *testing.T) {
	dsn := testenv.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, testenv.AdminDSNFor(dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)

	bad := func(what, q string) {
		t.Helper()
		rows, err := c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if len(names) > 0 {
			t.Errorf("%s: %v", what, names)
		}
	}
	const runtime = `(SELECT oid FROM pg_roles WHERE pg_has_role(oid, 'cartwright_runtime', 'MEMBER') AND NOT rolsuper)`
	bad("objects owned by a runtime role", `
		SELECT c.relname::text FROM pg_class c WHERE c.relowner IN `+runtime+`
		UNION ALL SELECT p.proname::text FROM pg_proc p WHERE p.proowner IN `+runtime+`
		UNION ALL SELECT n.nspname::text FROM pg_namespace n WHERE n.nspowner IN `+runtime+`
		UNION ALL SELECT y.typname::text FROM pg_type y WHERE y.typowner IN `+runtime+`
		UNION ALL SELECT d.datname::text FROM pg_database d WHERE d.datname = current_database() AND d.datdba IN `+runtime)
	bad("tables the runtime may truncate, reference or put triggers on", `
		SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
		  AND (has_table_privilege('cartwright_runtime', c.oid, 'TRUNCATE')
		    OR has_table_privilege('cartwright_runtime', c.oid, 'TRIGGER')
		    OR has_table_privilege('cartwright_runtime', c.oid, 'REFERENCES'))`)
	bad("append-only tables (a TRUNCATE trigger) the runtime may UPDATE or DELETE", `
		SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public'
		  AND EXISTS (SELECT FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgtype & 32 <> 0)
		  AND (has_table_privilege('cartwright_runtime', c.oid, 'UPDATE')
		    OR has_table_privilege('cartwright_runtime', c.oid, 'DELETE'))`)
	bad("SECURITY DEFINER functions without a pinned search_path", `
		SELECT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'public' AND p.prosecdef
		  AND NOT EXISTS (SELECT FROM unnest(p.proconfig) s WHERE s LIKE 'search_path=%')`)
	bad("schema or database the runtime may create in", `
		SELECT 'schema public' WHERE has_schema_privilege('cartwright_runtime', 'public', 'CREATE')
		UNION ALL SELECT current_database()::text WHERE has_database_privilege('cartwright_runtime', current_database(), 'CREATE')`)

	// What the runtime must keep to work, and the evidence it may only read.
	for _, check := range []struct{ table, priv string }{
		{"evidence_snapshots", "SELECT"}, {"evidence_chain_heads", "SELECT"},
		{"evidence_access_log", "INSERT"}, {"audit_events", "INSERT"}, {"history_archive", "INSERT"},
		{"history_archive_reads", "INSERT"}, {"draft_orders", "UPDATE"}, {"staff", "SELECT"}, {"staff_tokens", "SELECT"},
		// The codec server's sign-ins (read; opened through
		// codec_session_open, signed out by a column grant), the gateway's
		// tokens (last use), the merchants it reads under row-level
		// security, and the evidence the draft order's write verifies a
		// sealed total against (docs/quote-seals.md#what-the-write-checks).
		{"codec_sessions", "SELECT"},
		{"mcp_tokens", "SELECT"}, {"merchants", "SELECT"}, {"merchant_sessions", "SELECT"},
		{"draft_orders", "INSERT"}, {"draft_orders", "SELECT"},
	} {
		var ok bool
		if err := c.QueryRow(ctx, `SELECT has_table_privilege('cartwright_runtime', $1, $2)`, check.table, check.priv).Scan(&ok); err != nil || !ok {
			t.Errorf("runtime lacks %s on %s (%v)", check.priv, check.table, err)
		}
	}
	var lastUsed bool
	if err := c.QueryRow(ctx, `SELECT has_column_privilege('cartwright_runtime', 'mcp_tokens', 'last_used_at', 'UPDATE')`).Scan(&lastUsed); err != nil || !lastUsed {
		t.Errorf("runtime may not record a token's last use (%v)", err)
	}
	for _, check := range []struct{ table, priv string }{
		{"evidence_snapshots", "INSERT"}, {"evidence_chain_heads", "INSERT"}, {"evidence_chain_heads", "UPDATE"},
		{"history_archive_reads", "UPDATE"}, {"history_archive_reads", "DELETE"}, {"goose_db_version", "SELECT"},
	} {
		var ok bool
		if err := c.QueryRow(ctx, `SELECT has_table_privilege('cartwright_runtime', $1, $2)`, check.table, check.priv).Scan(&ok); err != nil || ok {
			t.Errorf("runtime holds %s on %s (%v)", check.priv, check.table, err)
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
