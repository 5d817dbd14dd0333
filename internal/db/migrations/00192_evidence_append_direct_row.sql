-- One direct call's evidence in one statement, in content hash format 2
-- (docs/evidence.md#direct-calls): what evidence_append_direct (00180) does
-- for format 1, with the snapshot as evidence_append_row's row (00190).
-- Under the chain's lock, the answer already kept under the key if there is
-- one (nothing is written: the caller answers it, or CONFLICT when the
-- fingerprints differ); else evidence_append_row, and when the answer is to
-- be kept (p_keep: an answer or a refusal that is not retryable and not
-- INVALID_ARGUMENT, docs/envelope.md#idempotency) its binding.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION evidence_append_direct_row(p_lock_class integer, p_row jsonb, p_fingerprint text,
    p_envelope jsonb, p_keep boolean)
RETURNS TABLE (r_bound boolean, r_fingerprint text, r_envelope jsonb, r_reused boolean, r_snapshot_id text,
    r_chain_seq bigint, r_chain_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_chain text := p_row ->> 'chain_key';
    v record;
BEGIN
    -- Only a direct call's chain: a direct key, activity type direct, no
    -- workflow (a missing field is refused too).
    IF (v_chain ~ '^direct:' AND p_row ->> 'activity_type' = 'direct' AND p_row ->> 'workflow_id' = '') IS NOT TRUE THEN
        RAISE EXCEPTION 'evidence_append_direct_row: % is not a direct call''s chain', v_chain;
    END IF;
    PERFORM pg_advisory_xact_lock(p_lock_class, hashtext(v_chain));
    RETURN QUERY SELECT true, d.fingerprint, d.envelope, false, d.snapshot_id, 0::bigint, ''::text
        FROM evidence_direct_calls d WHERE d.chain_key = v_chain;
    IF FOUND THEN
        RETURN;
    END IF;
    SELECT * INTO v FROM evidence_append_row(p_lock_class, p_row);
    IF p_keep AND NOT v.r_reused THEN
        INSERT INTO evidence_direct_calls (chain_key, tool, fingerprint, snapshot_id, envelope)
        VALUES (v_chain, p_row ->> 'tool', p_fingerprint, v.r_snapshot_id, p_envelope);
    END IF;
    RETURN QUERY SELECT false, p_fingerprint, NULL::jsonb, v.r_reused, v.r_snapshot_id, v.r_chain_seq, v.r_chain_hash;
END;
$$;
-- +goose StatementEnd
REVOKE EXECUTE ON FUNCTION evidence_append_direct_row(integer, jsonb, text, jsonb, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION evidence_append_direct_row(integer, jsonb, text, jsonb, boolean) TO cartwright_runtime;

-- +goose Down
DROP FUNCTION evidence_append_direct_row(integer, jsonb, text, jsonb, boolean);
