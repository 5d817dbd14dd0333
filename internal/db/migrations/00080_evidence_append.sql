-- One evidence append in one statement (docs/evidence.md#hash-chain): the store's lock, step
-- lookup, chain read, insert and head upsert used to be four round trips
-- (BEGIN, two batches, COMMIT). Called on its own, this function is one
-- implicit transaction, so the advisory lock is held until its commit as
-- before (docs/evidence.md#hash-chain).
--
-- The content hash covers chain_seq, which only the locked chain knows, so
-- the store sends the canonical JSON of the row cut around its chain_seq
-- value (hash_head, hash_tail) and the hashes are finished here with the
-- formulas of evidence/record.go: content_hash = "sha256:" + hex(sha256(
-- head || seq || tail)), chain_hash = "sha256:" + hex(sha256(prev ||
-- content_hash)). Verify recomputes both in Go.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION evidence_append(
    p_lock_class integer, p_snapshot_id text, p_dedupe_key text, p_chain_key text, p_tool text,
    p_tool_version text, p_build text, p_workflow_id text, p_run_id text, p_activity_id text,
    p_activity_type text, p_attempt integer, p_request_id text, p_correlation_id text,
    p_user_id_hash text, p_input_digest text, p_output jsonb, p_output_hash text,
    p_raw_ciphertext bytea, p_raw_nonce bytea, p_raw_key_id text, p_ruleset_version text,
    p_ttl_seconds integer, p_status text, p_created_at timestamptz, p_trace_id text,
    p_hash_head bytea, p_hash_tail bytea)
RETURNS TABLE (r_reused boolean, r_snapshot_id text, r_output jsonb, r_output_hash text, r_status text,
    r_ruleset_version text, r_created_at timestamptz, r_chain_seq bigint, r_content_hash text, r_chain_hash text)
LANGUAGE plpgsql AS $$
DECLARE
    v_seq bigint;
    v_prev text;
    v_content text;
    v_chain text;
BEGIN
    PERFORM pg_advisory_xact_lock(p_lock_class, hashtext(p_chain_key));
    -- Each statement below reads with a new snapshot (READ COMMITTED), so
    -- it sees what the previous holder of the lock committed.
    RETURN QUERY SELECT true, s.snapshot_id, s.output, s.output_hash, s.status, s.ruleset_version,
        s.created_at, s.chain_seq, s.content_hash, s.chain_hash
        FROM evidence_snapshots s WHERE s.dedupe_key = p_dedupe_key;
    IF FOUND THEN
        RETURN; -- the step already holds its row (docs/evidence.md#one-snapshot-per-step)
    END IF;
    -- The chain's last row, as before: the rows, not evidence_chain_heads,
    -- are the chain (the head only lets verify notice a deleted tail).
    SELECT s.chain_seq, s.chain_hash INTO v_seq, v_prev
        FROM evidence_snapshots s WHERE s.chain_key = p_chain_key ORDER BY s.chain_seq DESC LIMIT 1;
    v_seq := coalesce(v_seq, 0) + 1;
    v_prev := coalesce(v_prev, '');
    IF v_seq > 9007199254740991 THEN
        -- RFC 8785 writes integers as plain digits only up to 2^53.
        RAISE EXCEPTION 'evidence chain % is full', p_chain_key;
    END IF;
    v_content := 'sha256:' || encode(sha256(p_hash_head || convert_to(v_seq::text, 'UTF8') || p_hash_tail), 'hex');
    v_chain := 'sha256:' || encode(sha256(convert_to(v_prev || v_content, 'UTF8')), 'hex');
    INSERT INTO evidence_snapshots (snapshot_id, dedupe_key, chain_key, chain_seq, tool, tool_version,
        build, workflow_id, run_id, activity_id, activity_type, attempt, request_id, correlation_id, user_id_hash,
        input_digest, output, output_hash, raw_ciphertext, raw_nonce, raw_key_id, ruleset_version, ttl_seconds,
        status, created_at, content_hash, prev_chain_hash, chain_hash, trace_id)
    VALUES (p_snapshot_id, p_dedupe_key, p_chain_key, v_seq, p_tool, p_tool_version, p_build, p_workflow_id,
        p_run_id, p_activity_id, p_activity_type, p_attempt, p_request_id, p_correlation_id, p_user_id_hash,
        p_input_digest, p_output, p_output_hash, p_raw_ciphertext, p_raw_nonce, p_raw_key_id, p_ruleset_version,
        p_ttl_seconds, p_status, p_created_at, v_content, v_prev, v_chain, NULLIF(p_trace_id, ''));
    INSERT INTO evidence_chain_heads AS h (chain_key, last_seq, last_hash) VALUES (p_chain_key, v_seq, v_chain)
        ON CONFLICT (chain_key) DO UPDATE
        SET last_seq = EXCLUDED.last_seq, last_hash = EXCLUDED.last_hash, updated_at = now();
    RETURN QUERY SELECT false, p_snapshot_id, NULL::jsonb, p_output_hash, p_status, p_ruleset_version,
        p_created_at, v_seq, v_content, v_chain;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION evidence_append(integer, text, text, text, text, text, text, text, text, text, text, integer,
    text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text, timestamptz, text, bytea, bytea);
