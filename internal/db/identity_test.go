package db_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cartwright-dev/cartwright/internal/db"
	"github.com/cartwright-dev/cartwright/internal/testenv"
)

// TestRuntimeRoleCannotIssueIdentities is the insider's attack with the
// runtime login the worker and the internet-facing MCP gateway hold: mint a
// staff token for an admin, promote a support member, reactivate a former
// one, add an admin, un-revoke a token, and rewrite or mint MCP tokens (drop
// a token's tenant to reach every merchant). PostgreSQL refuses each with a
// privilege error (migration 00230, docs/evidence.md#database-roles); the
// roster and the tokens stay as the issuing role left them. The one write
// left, a token's last use, still works.
func TestRuntimeRoleCannotIssueIdentities(t *testing.T) {
	dsn := testenv.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runtime, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.Close()
	// What an operator issued: a tenant's MCP token and a support
	// member's token, since revoked (TestIssuingRoleGrants and the starter's
	// tests issue through the issuing role itself).
	testenv.AdminExec(t, runtime, `INSERT INTO mcp_tokens (token_id, token_hash, actor_id, tenant)
		VALUES ('mt_00000000000000aa', repeat('a', 64), 'shop-agent', 'tenant_acme')`)
	testenv.AdminExec(t, runtime, `INSERT INTO staff_tokens (token_sha256, staff_id, label, expires_at, revoked_at)
		VALUES (sha256('alice'::bytea), 'alice.support', 'laptop', now() + interval '1 hour', now())`)

	attacks := []struct{ what, sql string }{
		{"a staff token for an admin", `INSERT INTO staff_tokens (token_sha256, staff_id, label, expires_at)
			VALUES (sha256('forged'::bytea), 'carol.admin', 'x', now() + interval '1 day')`},
		{"promote a support member to admin", `UPDATE staff SET role = 'admin' WHERE staff_id = 'alice.support'`},
		{"reactivate a former member", `UPDATE staff SET active = true WHERE staff_id = 'dave.former'`},
		{"add a new admin", `INSERT INTO staff (staff_id, display_name, role) VALUES ('mallory.admin', 'Mallory', 'admin')`},
		{"un-revoke a staff token", `UPDATE staff_tokens SET revoked_at = NULL`},
		{"stretch a staff token", `UPDATE staff_tokens SET expires_at = now() + interval '10 years'`},
		{"take a staff token over", `UPDATE staff_tokens SET staff_id = 'carol.admin'`},
		{"delete a staff token's trace", `DELETE FROM staff_tokens`},
		{"drop an MCP token's tenant", `UPDATE mcp_tokens SET tenant = NULL`},
		{"widen an MCP token's tools", `UPDATE mcp_tokens SET tools = '{}'`},
		{"un-revoke an MCP token", `UPDATE mcp_tokens SET revoked_at = NULL, expires_at = NULL`},
		{"mint an MCP token", `INSERT INTO mcp_tokens (token_id, token_hash, actor_id)
			VALUES ('mt_00000000000000bb', repeat('b', 64), 'rogue-agent')`},
		{"delete an MCP token", `DELETE FROM mcp_tokens`},
		{"move a merchant to another tenant", `UPDATE merchants SET tenant = 'tenant_harbor'`},
		{"add a merchant", `INSERT INTO merchants (merchant_id, display_name, country, business_type)
			VALUES ('m_rogue', 'Rogue', 'GB', 'company')`},
		{"add a merchant session", `INSERT INTO merchant_sessions (session_hash, merchant_id, expires_at)
			VALUES (sha256('s'::bytea), 'm_acme_goods', now() + interval '1 day')`},
		{"sign an admin in at the codec server", `INSERT INTO codec_sessions (session_sha256, staff_id, expires_at)
			VALUES (sha256('forged-session'::bytea), 'carol.admin', now() + interval '1 day')`},
		{"move a session to an admin", `UPDATE codec_sessions SET staff_id = 'carol.admin'`},
		{"stretch a session", `UPDATE codec_sessions SET expires_at = now() + interval '1 year'`},
		{"become the issuing role", `SET ROLE cartwright_issuing`},
	}
	for _, a := range attacks {
		_, err := runtime.Exec(ctx, a.sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
			t.Errorf("as the runtime role, %s: err %v, want a privilege refusal (SQLSTATE 42501)", a.what, err)
		}
	}

	// The roster and the tokens are as the issuing role left them.
	var admins []string
	rows, err := runtime.Query(ctx, `SELECT staff_id FROM staff WHERE role = 'admin' AND active ORDER BY staff_id`)
	if err != nil {
		t.Fatal(err)
	}
	if admins, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	var aliceRole string
	var daveActive bool
	var liveStaffTokens, mcpTokens int
	var tenant *string
	if err := runtime.QueryRow(ctx, `SELECT
			(SELECT role FROM staff WHERE staff_id = 'alice.support'),
			(SELECT active FROM staff WHERE staff_id = 'dave.former'),
			(SELECT count(*) FROM staff_tokens WHERE revoked_at IS NULL),
			(SELECT count(*) FROM mcp_tokens),
			(SELECT tenant FROM mcp_tokens WHERE token_id = 'mt_00000000000000aa')`).
		Scan(&aliceRole, &daveActive, &liveStaffTokens, &mcpTokens, &tenant); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(admins, []string{"carol.admin"}) || aliceRole != "support" || daveActive || liveStaffTokens != 0 ||
		mcpTokens != 1 || tenant == nil || *tenant != "tenant_acme" {
		t.Fatalf("after the attempts: admins %v, alice %s, dave active %v, %d live staff tokens, %d MCP tokens, tenant %v",
			admins, aliceRole, daveActive, liveStaffTokens, mcpTokens, tenant)
	}

	// A session opens only from a live token itself: its hash (which the
	// runtime reads) or another member's token opens nothing.
	testenv.AdminExec(t, runtime, `INSERT INTO staff_tokens (token_sha256, staff_id, label, expires_at)
		VALUES (sha256('cwst_carol'::bytea), 'carol.admin', 'laptop', now() + interval '1 hour')`)
	var opened int
	if err := runtime.QueryRow(ctx, `SELECT count(*) FROM codec_session_open(sha256('s1'::bytea),
		(SELECT encode(token_sha256, 'hex') FROM staff_tokens WHERE staff_id = 'carol.admin'), 3600)`).Scan(&opened); err != nil || opened != 0 {
		t.Errorf("a session from a token's hash: %d opened, %v", opened, err)
	}
	var who string
	if err := runtime.QueryRow(ctx, `SELECT r_staff_id FROM codec_session_open(sha256('s2'::bytea), 'cwst_carol', 3600)`).Scan(&who); err != nil || who != "carol.admin" {
		t.Errorf("a session from the token itself: %q, %v", who, err)
	}
	if err := runtime.QueryRow(ctx, `SELECT r_staff_id FROM codec_session_open(sha256('s3'::bytea), NULL, 3600)`).Scan(&who); err != nil || who != "dev-secret" {
		t.Errorf("a session without a token: %q, %v; want the dev secret's reader only", who, err)
	}

	// The gateway's note of a token's last use is the runtime's one write.
	if tag, err := runtime.Exec(ctx, `UPDATE mcp_tokens SET last_used_at = now() WHERE token_id = 'mt_00000000000000aa'`); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the runtime role could not note a token's last use: %v", err)
	}
}

// TestIssuingRoleGrants: the issuing role holds exactly the grants of
// docs/operators.md#keys-and-grants-per-process on every table of the
// schema (the roster and the two token tables; nothing of the evidence, the
// drafts or the merchants), and the runtime exactly its reads there. A new
// grant to either fails here until the table and the doc say so.
func TestIssuingRoleGrants(t *testing.T) {
	dsn := testenv.Database(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, testenv.AdminDSNFor(dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)

	// privileges: role → table → the table-level privileges it holds
	// (SELECT, INSERT, UPDATE, DELETE; column grants are checked apart).
	privileges := func(role string) map[string][]string {
		rows, err := c.Query(ctx, `
			SELECT c.relname::text, p.priv FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) AS p(priv)
			WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND has_table_privilege($1, c.oid, p.priv)
			ORDER BY 1, array_position(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE'], p.priv)`, role)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for rows.Next() {
			var table, priv string
			if err := rows.Scan(&table, &priv); err != nil {
				t.Fatal(err)
			}
			out[table] = append(out[table], priv)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := map[string][]string{
		"staff":        {"SELECT", "INSERT", "UPDATE"},
		"staff_tokens": {"SELECT", "INSERT"},
		"mcp_tokens":   {"SELECT", "INSERT"},
	}
	got := privileges(testenv.IssuingGroup)
	for table, privs := range got {
		if !slices.Equal(privs, want[table]) {
			t.Errorf("the issuing role holds %v on %s, want %v", privs, table, want[table])
		}
	}
	for table := range want {
		if _, ok := got[table]; !ok {
			t.Errorf("the issuing role holds nothing on %s", table)
		}
	}
	runtime := privileges(testenv.RuntimeGroup)
	for _, table := range []string{"staff", "staff_tokens", "mcp_tokens", "merchants", "merchant_sessions", "codec_sessions"} {
		if !slices.Equal(runtime[table], []string{"SELECT"}) {
			t.Errorf("the runtime role holds %v on %s, want only SELECT", runtime[table], table)
		}
	}

	// Column grants: the issuing role revokes tokens; the runtime notes a
	// token's last use. Nothing else.
	rows, err := c.Query(ctx, `
		SELECT grantee::regrole::text || ' ' || c.relname || '.' || a.attname
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		CROSS JOIN LATERAL aclexplode(a.attacl) x(grantor, grantee, privilege_type, is_grantable)
		WHERE n.nspname = 'public' AND x.privilege_type = 'UPDATE'
		  AND x.grantee IN ($1::regrole, $2::regrole)
		ORDER BY 1`, testenv.IssuingGroup, testenv.RuntimeGroup)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	wantCols := []string{
		"cartwright_issuing mcp_tokens.revoked_at", "cartwright_issuing staff_tokens.revoked_at",
		"cartwright_runtime audit_events.evidence_refs", "cartwright_runtime audit_events.finalized_at",
		"cartwright_runtime audit_events.reason", "cartwright_runtime audit_events.status",
		"cartwright_runtime audit_events.updated_at", "cartwright_runtime codec_sessions.revoked_at",
		"cartwright_runtime mcp_tokens.last_used_at",
	}
	if !slices.Equal(cols, wantCols) {
		t.Errorf("column UPDATE grants:\n got %v\nwant %v", cols, wantCols)
	}

	// The issuing login issues and revokes, as `starter staff token` and
	// `starter mcp token` do.
	issuer := testenv.IssuerPool(t, dsn)
	for _, q := range []string{
		`INSERT INTO staff_tokens (token_sha256, staff_id, label, expires_at)
			SELECT sha256('t'::bytea), staff_id, 'laptop', now() + interval '1 hour' FROM staff WHERE staff_id = 'alice.support' AND active`,
		`UPDATE staff_tokens SET revoked_at = now() WHERE staff_id = 'alice.support' AND revoked_at IS NULL`,
		`INSERT INTO mcp_tokens (token_id, token_hash, actor_id, tenant) VALUES ('mt_00000000000000cc', repeat('c', 64), 'shop-agent', 'tenant_acme')`,
		`UPDATE mcp_tokens SET revoked_at = now() WHERE token_id = 'mt_00000000000000cc' AND revoked_at IS NULL`,
	} {
		if tag, err := issuer.Exec(ctx, q); err != nil || tag.RowsAffected() != 1 {
			t.Errorf("as the issuing role %q: %v", oneLine(q), err)
		}
	}
	for _, q := range []string{`SELECT count(*) FROM evidence_snapshots`, `SELECT count(*) FROM draft_orders`,
		`UPDATE mcp_tokens SET tenant = NULL`, `DELETE FROM staff`} {
		if _, err := issuer.Exec(ctx, q); err == nil {
			t.Errorf("the issuing role ran %q", q)
		}
	}

	// Neither login is in the other's group, and neither may create roles.
	var crossed bool
	if err := c.QueryRow(ctx, `SELECT pg_has_role($1, $2, 'MEMBER') OR pg_has_role($3, $4, 'MEMBER')
		OR EXISTS (SELECT FROM pg_roles WHERE rolname IN ($1, $3) AND (rolsuper OR rolcreaterole OR rolbypassrls))`,
		testenv.RuntimeRole, testenv.IssuingGroup, testenv.IssuerRole, testenv.RuntimeGroup).Scan(&crossed); err != nil || crossed {
		t.Errorf("the runtime and issuing logins share a group or hold role rights (%v)", err)
	}
}
