-- Content hash format 2 (docs/evidence.md#content-hash-formats): the store computes a
-- row's content hash whole, over its canonical content without chain_seq,
-- and this function only links it into its chain. Format 1 hashed chain_seq
-- into the content, so only the locked chain could finish the hash, and the
-- store sent the canonical JSON cut around the seq (migration 00080).
--
-- hash_format marks each row's format, and verify picks the formula by it.
-- A column whose default is 1 is the marker that touches nothing: adding it
-- with a constant default rewrites no row (the rows are append-only and
-- stay as they were written, so their hashes keep verifying), every row
-- already there reads 1, and the format-1 functions, which a draining build
-- still calls (docs/versioning.md#supported-builds), keep writing correct
-- format-1 rows without knowing the column. Only the functions below write 2.
-- The CHECK is NOT VALID so that adding it does not scan the table under
-- ALTER TABLE's lock: every existing row holds the default.
-- +goose Up
ALTER TABLE evidence_snapshots ADD COLUMN hash_format smallint NOT NULL DEFAULT 1;
ALTER TABLE evidence_snapshots ADD CONSTRAINT evidence_snapshots_hash_format
    CHECK (hash_format IN (1, 2)) NOT VALID;

-- One evidence append in one statement, as evidence_append (00080): the
-- chain's advisory lock (held until this statement's transaction commits),
-- the step's row if it has one (docs/evidence.md#one-snapshot-per-step),
-- else the new row after the chain's last one and the chain head moved.
--
-- p_row is the row as JSON under its column names (evidence/append.go's
-- newRow), read with the table's own row type: dedupe_key and the content
-- columns, content_hash included. The chain columns are this function's:
-- whatever p_row says of chain_seq, prev_chain_hash, chain_hash,
-- hash_format or recorded_at is never read. chain_hash = "sha256:" +
-- hex(sha256(prev_chain_hash || content_hash)), the formula of every format.
-- +goose StatementBegin
CREATE FUNCTION evidence_append_row(p_lock_class integer, p_row jsonb)
RETURNS TABLE (r_reused boolean, r_snapshot_id text, r_output jsonb, r_output_hash text, r_status text,
    r_ruleset_version text, r_created_at timestamptz, r_chain_seq bigint, r_chain_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    n evidence_snapshots := jsonb_populate_record(NULL::evidence_snapshots, p_row);
    v_seq bigint;
    v_prev text;
BEGIN
    -- A JSON null output is the jsonb value null, which the record's
    -- conversion would turn into SQL NULL.
    n.output := p_row -> 'output';
    PERFORM pg_advisory_xact_lock(p_lock_class, hashtext(n.chain_key));
    -- Each statement below reads with a new snapshot (READ COMMITTED), so
    -- it sees what the previous holder of the lock committed.
    RETURN QUERY SELECT true, s.snapshot_id, s.output, s.output_hash, s.status, s.ruleset_version,
        s.created_at, s.chain_seq, s.chain_hash
        FROM evidence_snapshots s WHERE s.dedupe_key = n.dedupe_key;
    IF FOUND THEN
        RETURN;
    END IF;
    -- The rows, not evidence_chain_heads, are the chain (the head only lets
    -- verify notice a deleted tail).
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
REVOKE EXECUTE ON FUNCTION evidence_append_row(integer, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION evidence_append_row(integer, jsonb) TO cartwright_runtime;

-- +goose Down
-- Without the column a format-2 row would be checked as format 1 and fail:
-- going down is refused once one was written.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM evidence_snapshots WHERE hash_format <> 1) THEN
        RAISE EXCEPTION 'evidence_snapshots holds hash format 2 rows: dropping hash_format would break their verification';
    END IF;
END;
$$;
-- +goose StatementEnd
DROP FUNCTION evidence_append_row(integer, jsonb);
ALTER TABLE evidence_snapshots DROP COLUMN hash_format;
