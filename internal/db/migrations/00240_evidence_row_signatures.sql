-- Rows name their author (docs/evidence.md#row-signatures). The append
-- functions take any content hash from the runtime role, so the chain proves
-- order, not authorship: a row written through them by anyone holding the
-- runtime login linked and verified like the worker's own. Since this
-- migration every row carries an Ed25519 signature by the writing process's
-- key (the worker's, or the MCP gateway's for direct calls) over its content
-- hash, in hash format 3; verify, the audit and reconcile check it with the
-- writers' public keys, which the database does not hold and cannot use.
--
-- The database cannot check a signature, so what it keeps is the moment rows
-- began to be signed: a row of format 1 or 2 (no signature) recorded after it
-- was written through an append function without a key and is named
-- (unsigned_row). Rows recorded before keep verifying under their format.
-- evidence_row_signing holds that moment, one row, read-only to the runtime.
-- recorded_at of a row this function writes is clock_timestamp(), never the
-- start of the caller's transaction, which a caller could have opened before
-- this migration committed.
-- +goose Up
CREATE TABLE evidence_row_signing (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    since timestamptz NOT NULL
);
INSERT INTO evidence_row_signing (since) VALUES (clock_timestamp());
REVOKE ALL ON evidence_row_signing FROM cartwright_runtime;
GRANT SELECT ON evidence_row_signing TO cartwright_runtime;

ALTER TABLE evidence_snapshots ADD COLUMN workflow_type text;
ALTER TABLE evidence_snapshots ADD COLUMN signer_key_id text;
ALTER TABLE evidence_snapshots ADD COLUMN row_signature text;
ALTER TABLE evidence_snapshots DROP CONSTRAINT evidence_snapshots_hash_format;
ALTER TABLE evidence_snapshots ADD CONSTRAINT evidence_snapshots_hash_format
    CHECK (hash_format IN (1, 2, 3)) NOT VALID;

-- evidence_append_row (migration 00190) with the row's signature: a row that
-- carries one is format 3 (its content hash the store's, with the workflow
-- type and the signer's key id hashed in), one without is format 2, as a
-- build from before this migration still writes while it drains. Everything
-- else is as before; evidence_append_rows and evidence_append_direct_row call
-- this function, so they write the same.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION evidence_append_row(p_lock_class integer, p_row jsonb)
RETURNS TABLE (r_reused boolean, r_snapshot_id text, r_output jsonb, r_output_hash text, r_status text,
    r_ruleset_version text, r_created_at timestamptz, r_chain_seq bigint, r_chain_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    n evidence_snapshots := jsonb_populate_record(NULL::evidence_snapshots, p_row);
    v_seq bigint;
    v_prev text;
    v_format smallint := 2;
BEGIN
    n.output := p_row -> 'output';
    IF coalesce(n.row_signature, '') <> '' THEN
        v_format := 3;
    ELSE
        n.row_signature := NULL; n.signer_key_id := NULL; n.workflow_type := NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(p_lock_class, hashtext(n.chain_key));
    RETURN QUERY SELECT true, s.snapshot_id, s.output, s.output_hash, s.status, s.ruleset_version,
        s.created_at, s.chain_seq, s.chain_hash
        FROM evidence_snapshots s WHERE s.dedupe_key = n.dedupe_key;
    IF FOUND THEN
        RETURN;
    END IF;
    SELECT s.chain_seq, s.chain_hash INTO v_seq, v_prev
        FROM evidence_snapshots s WHERE s.chain_key = n.chain_key ORDER BY s.chain_seq DESC LIMIT 1;
    n.chain_seq := coalesce(v_seq, 0) + 1;
    n.prev_chain_hash := coalesce(v_prev, '');
    n.chain_hash := 'sha256:' || encode(sha256(convert_to(n.prev_chain_hash || n.content_hash, 'UTF8')), 'hex');
    INSERT INTO evidence_snapshots (snapshot_id, dedupe_key, chain_key, chain_seq, hash_format, tool, tool_version,
        build, workflow_id, run_id, activity_id, activity_type, attempt, request_id, correlation_id, user_id_hash,
        input_digest, output, output_hash, raw_ciphertext, raw_nonce, raw_key_id, ruleset_version, ttl_seconds,
        status, created_at, recorded_at, content_hash, prev_chain_hash, chain_hash, trace_id, workflow_type,
        signer_key_id, row_signature)
    VALUES (n.snapshot_id, n.dedupe_key, n.chain_key, n.chain_seq, v_format, n.tool, n.tool_version, n.build,
        n.workflow_id, n.run_id, n.activity_id, n.activity_type, n.attempt, n.request_id, n.correlation_id,
        n.user_id_hash, n.input_digest, n.output, n.output_hash, n.raw_ciphertext, n.raw_nonce, n.raw_key_id,
        n.ruleset_version, n.ttl_seconds, n.status, n.created_at, clock_timestamp(), n.content_hash,
        n.prev_chain_hash, n.chain_hash, NULLIF(n.trace_id, ''), n.workflow_type, n.signer_key_id, n.row_signature);
    INSERT INTO evidence_chain_heads AS h (chain_key, last_seq, last_hash) VALUES (n.chain_key, n.chain_seq, n.chain_hash)
        ON CONFLICT (chain_key) DO UPDATE
        SET last_seq = EXCLUDED.last_seq, last_hash = EXCLUDED.last_hash, updated_at = now();
    RETURN QUERY SELECT false, n.snapshot_id, NULL::jsonb, n.output_hash, n.status, n.ruleset_version,
        n.created_at, n.chain_seq, n.chain_hash;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- Without the columns a format-3 row could not be verified: going down is
-- refused once one was written.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM evidence_snapshots WHERE hash_format = 3) THEN
        RAISE EXCEPTION 'evidence_snapshots holds signed (hash format 3) rows: dropping their signatures would break their verification';
    END IF;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION evidence_append_row(p_lock_class integer, p_row jsonb)
RETURNS TABLE (r_reused boolean, r_snapshot_id text, r_output jsonb, r_output_hash text, r_status text,
    r_ruleset_version text, r_created_at timestamptz, r_chain_seq bigint, r_chain_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    n evidence_snapshots := jsonb_populate_record(NULL::evidence_snapshots, p_row);
    v_seq bigint;
    v_prev text;
BEGIN
    n.output := p_row -> 'output';
    PERFORM pg_advisory_xact_lock(p_lock_class, hashtext(n.chain_key));
    RETURN QUERY SELECT true, s.snapshot_id, s.output, s.output_hash, s.status, s.ruleset_version,
        s.created_at, s.chain_seq, s.chain_hash
        FROM evidence_snapshots s WHERE s.dedupe_key = n.dedupe_key;
    IF FOUND THEN
        RETURN;
    END IF;
    SELECT s.chain_seq, s.chain_hash INTO v_seq, v_prev
        FROM evidence_snapshots s WHERE s.chain_key = n.chain_key ORDER BY s.chain_seq DESC LIMIT 1;
    n.chain_seq := coalesce(v_seq, 0) + 1;
    n.prev_chain_hash := coalesce(v_prev, '');
    n.chain_hash := 'sha256:' || encode(sha256(convert_to(n.prev_chain_hash || n.content_hash, 'UTF8')), 'hex');
    INSERT INTO evidence_snapshots (snapshot_id, dedupe_key, chain_key, chain_seq, hash_format, tool, tool_version,
        build, workflow_id, run_id, activity_id, activity_type, attempt, request_id, correlation_id, user_id_hash,
        input_digest, output, output_hash, raw_ciphertext, raw_nonce, raw_key_id, ruleset_version, ttl_seconds,
        status, created_at, content_hash, prev_chain_hash, chain_hash, trace_id)
    VALUES (n.snapshot_id, n.dedupe_key, n.chain_key, n.chain_seq, 2, n.tool, n.tool_version, n.build,
        n.workflow_id, n.run_id, n.activity_id, n.activity_type, n.attempt, n.request_id, n.correlation_id,
        n.user_id_hash, n.input_digest, n.output, n.output_hash, n.raw_ciphertext, n.raw_nonce, n.raw_key_id,
        n.ruleset_version, n.ttl_seconds, n.status, n.created_at, n.content_hash, n.prev_chain_hash, n.chain_hash,
        NULLIF(n.trace_id, ''));
    INSERT INTO evidence_chain_heads AS h (chain_key, last_seq, last_hash) VALUES (n.chain_key, n.chain_seq, n.chain_hash)
        ON CONFLICT (chain_key) DO UPDATE
        SET last_seq = EXCLUDED.last_seq, last_hash = EXCLUDED.last_hash, updated_at = now();
    RETURN QUERY SELECT false, n.snapshot_id, NULL::jsonb, n.output_hash, n.status, n.ruleset_version,
        n.created_at, n.chain_seq, n.chain_hash;
END;
$$;
-- +goose StatementEnd
ALTER TABLE evidence_snapshots DROP CONSTRAINT evidence_snapshots_hash_format;
ALTER TABLE evidence_snapshots ADD CONSTRAINT evidence_snapshots_hash_format CHECK (hash_format IN (1, 2)) NOT VALID;
ALTER TABLE evidence_snapshots DROP COLUMN row_signature;
ALTER TABLE evidence_snapshots DROP COLUMN signer_key_id;
ALTER TABLE evidence_snapshots DROP COLUMN workflow_type;
DROP TABLE evidence_row_signing;
