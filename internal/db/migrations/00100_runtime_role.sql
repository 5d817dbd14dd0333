-- Least privilege (docs/evidence.md#database-roles). Migrations run as the
-- schema owner (cartwright_owner: `starter migrate`); the worker, the MCP
-- gateway and the starter's commands log in as roles that are members of
-- cartwright_runtime, which owns nothing and holds only the grants below. An
-- owner may disable a table's triggers, drop it or alter its functions; a
-- runtime role may do none of that, so the append-only triggers bind it.
--
-- The roles are cluster-wide, so an operator creates them once (as a
-- superuser) before the first `starter migrate`; this migration fails with
-- "role cartwright_runtime does not exist" until then.
-- +goose Up
-- Nobody but the owner creates objects in the schema (PostgreSQL 15's default
-- already; an older cluster or a database made by hand may still grant it).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO cartwright_runtime;

-- Ordinary tables: rows may be read and written, never truncated, and no
-- trigger, reference or ownership right. Tables later migrations create get
-- the same by default; an append-only table revokes what it must not allow
-- (docs/evidence.md#a-new-table).
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO cartwright_runtime;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO cartwright_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO cartwright_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO cartwright_runtime;

-- The migrations' own bookkeeping is the owner's alone.
REVOKE ALL ON goose_db_version FROM cartwright_runtime;
REVOKE ALL ON SEQUENCE goose_db_version_id_seq FROM cartwright_runtime;

-- Evidence is written only through evidence_append / evidence_append_batch
-- (below), which link each row into its chain and move the chain head: the
-- runtime reads the rows and heads but cannot insert an unlinked row or move
-- a head.
REVOKE ALL ON evidence_snapshots, evidence_chain_heads FROM cartwright_runtime;
GRANT SELECT ON evidence_snapshots, evidence_chain_heads TO cartwright_runtime;

-- Access logs and the history archive: append and read.
REVOKE ALL ON evidence_access_log, history_archive, history_archive_reads FROM cartwright_runtime;
GRANT SELECT, INSERT ON evidence_access_log, history_archive, history_archive_reads TO cartwright_runtime;

-- Audit events: append, read, and close a pending row (the two-phase audit's
-- finalise and reconcile); the guard trigger refuses every other change.
REVOKE ALL ON audit_events FROM cartwright_runtime;
GRANT SELECT, INSERT ON audit_events TO cartwright_runtime;
GRANT UPDATE (status, reason, evidence_refs, updated_at, finalized_at) ON audit_events TO cartwright_runtime;

-- Functions: EXECUTE for the runtime, not for every role of the cluster.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO cartwright_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO cartwright_runtime;

-- The evidence appends run with the owner's rights (the runtime cannot write
-- the tables they write). A pinned search_path keeps a caller from
-- redirecting their table names: public is the owner's alone, and pg_temp,
-- named last, is never searched first.
ALTER FUNCTION evidence_append(integer, text, text, text, text, text, text, text, text, text, text, integer,
    text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text, timestamptz, text, bytea, bytea)
    SECURITY DEFINER SET search_path = public, pg_temp;
ALTER FUNCTION evidence_append_batch(integer, text[], text[], text[], text[], text[], text[], text[], text[],
    text[], text[], integer[], text[], text[], text[], text[], text[], text[], bytea[], bytea[], text[], text[],
    integer[], text[], timestamptz[], text[], bytea[], bytea[])
    SECURITY DEFINER SET search_path = public, pg_temp;

-- +goose Down
ALTER FUNCTION evidence_append_batch(integer, text[], text[], text[], text[], text[], text[], text[], text[],
    text[], text[], integer[], text[], text[], text[], text[], text[], text[], bytea[], bytea[], text[], text[],
    integer[], text[], timestamptz[], text[], bytea[], bytea[])
    SECURITY INVOKER RESET search_path;
ALTER FUNCTION evidence_append(integer, text, text, text, text, text, text, text, text, text, text, integer,
    text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text, timestamptz, text, bytea, bytea)
    SECURITY INVOKER RESET search_path;
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE EXECUTE ON FUNCTIONS FROM cartwright_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO PUBLIC;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM cartwright_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON SEQUENCES FROM cartwright_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON TABLES FROM cartwright_runtime;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM cartwright_runtime;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM cartwright_runtime;
REVOKE ALL ON SCHEMA public FROM cartwright_runtime;
