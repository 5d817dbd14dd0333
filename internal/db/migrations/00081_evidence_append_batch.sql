-- Several evidence appends in one statement, all or nothing
-- (docs/evidence.md#staged-batches): an activity that makes several tool
-- calls stages their snapshots and writes them together, one round trip and
-- one commit instead of one per call.
--
-- The arrays are the columns of evidence_append (migration 00080), one
-- element per row, in the order the calls were made. Every chain's advisory
-- lock is taken first, in the order of the lock key, so two batches never
-- wait for each other crosswise (a single append holds one lock only). Each
-- row is then appended by evidence_append itself, so the chain rules and
-- hash formulas are the ones of a single append. A row whose step already
-- holds a snapshot (docs/evidence.md#one-snapshot-per-step), in the store or
-- earlier in the same batch, raises SQLSTATE EV409: the statement fails and
-- its transaction rolls back, so nothing of the batch is written.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION evidence_append_batch(
    p_lock_class integer, p_snapshot_id text[], p_dedupe_key text[], p_chain_key text[], p_tool text[],
    p_tool_version text[], p_build text[], p_workflow_id text[], p_run_id text[], p_activity_id text[],
    p_activity_type text[], p_attempt integer[], p_request_id text[], p_correlation_id text[],
    p_user_id_hash text[], p_input_digest text[], p_output text[], p_output_hash text[],
    p_raw_ciphertext bytea[], p_raw_nonce bytea[], p_raw_key_id text[], p_ruleset_version text[],
    p_ttl_seconds integer[], p_status text[], p_created_at timestamptz[], p_trace_id text[],
    p_hash_head bytea[], p_hash_tail bytea[])
RETURNS TABLE (r_snapshot_id text, r_chain_seq bigint, r_content_hash text, r_chain_hash text)
LANGUAGE plpgsql AS $$
DECLARE
    n integer := coalesce(cardinality(p_snapshot_id), 0);
    v_lock integer;
    v_row record;
BEGIN
    -- A NULL array counts as empty, as it does for n.
    IF EXISTS (SELECT FROM unnest(ARRAY[cardinality(p_dedupe_key), cardinality(p_chain_key), cardinality(p_tool),
            cardinality(p_tool_version), cardinality(p_build), cardinality(p_workflow_id), cardinality(p_run_id),
            cardinality(p_activity_id), cardinality(p_activity_type), cardinality(p_attempt),
            cardinality(p_request_id), cardinality(p_correlation_id), cardinality(p_user_id_hash),
            cardinality(p_input_digest), cardinality(p_output), cardinality(p_output_hash),
            cardinality(p_raw_ciphertext), cardinality(p_raw_nonce), cardinality(p_raw_key_id),
            cardinality(p_ruleset_version), cardinality(p_ttl_seconds), cardinality(p_status),
            cardinality(p_created_at), cardinality(p_trace_id), cardinality(p_hash_head), cardinality(p_hash_tail)])
            AS len WHERE coalesce(len, 0) <> n) THEN
        RAISE EXCEPTION 'evidence_append_batch: the column arrays differ in length';
    END IF;
    -- Lock order: by lock key, whatever order the rows come in.
    FOR v_lock IN SELECT DISTINCT hashtext(k) FROM unnest(p_chain_key) AS k ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(p_lock_class, v_lock);
    END LOOP;
    FOR i IN 1 .. n LOOP
        SELECT * INTO v_row FROM evidence_append(p_lock_class, p_snapshot_id[i], p_dedupe_key[i], p_chain_key[i],
            p_tool[i], p_tool_version[i], p_build[i], p_workflow_id[i], p_run_id[i], p_activity_id[i],
            p_activity_type[i], p_attempt[i], p_request_id[i], p_correlation_id[i], p_user_id_hash[i],
            p_input_digest[i], p_output[i]::jsonb, p_output_hash[i], p_raw_ciphertext[i], p_raw_nonce[i],
            p_raw_key_id[i], p_ruleset_version[i], p_ttl_seconds[i], p_status[i], p_created_at[i], p_trace_id[i],
            p_hash_head[i], p_hash_tail[i]);
        IF v_row.r_reused THEN
            RAISE EXCEPTION 'evidence step already recorded: %', v_row.r_snapshot_id USING ERRCODE = 'EV409';
        END IF;
        r_snapshot_id := p_snapshot_id[i];
        r_chain_seq := v_row.r_chain_seq;
        r_content_hash := v_row.r_content_hash;
        r_chain_hash := v_row.r_chain_hash;
        RETURN NEXT;
    END LOOP;
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION evidence_append_batch(integer, text[], text[], text[], text[], text[], text[], text[], text[], text[],
    text[], integer[], text[], text[], text[], text[], text[], text[], bytea[], bytea[], text[], text[], integer[],
    text[], timestamptz[], text[], bytea[], bytea[]);
