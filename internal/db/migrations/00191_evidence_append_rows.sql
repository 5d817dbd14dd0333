-- Several evidence appends in one statement, all or nothing, in content
-- hash format 2 (docs/evidence.md#staged-batches): what
-- evidence_append_batch (00081) does for format 1, with the rows as one JSON
-- array of evidence_append_row's rows (00190) instead of 28 column arrays.
--
-- Every chain's advisory lock is taken first, in the order of the lock key,
-- so two batches never wait for each other crosswise; then each row is
-- appended, in array order, by evidence_append_row itself, so the chain
-- rules are those of a single append. A row whose step already holds a
-- snapshot, in the store or earlier in the same batch, raises SQLSTATE
-- EV409: the statement fails and its transaction rolls back, so nothing of
-- the batch is written.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION evidence_append_rows(p_lock_class integer, p_rows jsonb)
RETURNS TABLE (r_snapshot_id text, r_chain_seq bigint, r_chain_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_lock integer;
    v_new jsonb;
    v_row record;
BEGIN
    IF jsonb_typeof(p_rows) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'evidence_append_rows: the rows are not a JSON array';
    END IF;
    -- Lock order: by lock key, whatever order the rows come in.
    FOR v_lock IN SELECT DISTINCT hashtext(e ->> 'chain_key') FROM jsonb_array_elements(p_rows) AS e ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(p_lock_class, v_lock);
    END LOOP;
    FOR v_new IN SELECT e FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS a(e, i) ORDER BY i LOOP
        SELECT * INTO v_row FROM evidence_append_row(p_lock_class, v_new);
        IF v_row.r_reused THEN
            RAISE EXCEPTION 'evidence step already recorded: %', v_row.r_snapshot_id USING ERRCODE = 'EV409';
        END IF;
        r_snapshot_id := v_row.r_snapshot_id;
        r_chain_seq := v_row.r_chain_seq;
        r_chain_hash := v_row.r_chain_hash;
        RETURN NEXT;
    END LOOP;
END;
$$;
-- +goose StatementEnd
REVOKE EXECUTE ON FUNCTION evidence_append_rows(integer, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION evidence_append_rows(integer, jsonb) TO cartwright_runtime;

-- +goose Down
DROP FUNCTION evidence_append_rows(integer, jsonb);
