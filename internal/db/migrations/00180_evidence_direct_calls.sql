-- Read-only tool calls answered without a workflow (docs/evidence.md#direct-calls):
-- the MCP gateway runs a read-only tool through the invoker itself and
-- writes its evidence snapshot here, bound to the call's key, in one
-- statement. A call's key is the chain it writes: chain_key = 'direct:' ||
-- hex(sha256(user_id_hash || 0x1f || request_id)), computed from the
-- snapshot's own columns, so the audit recomputes it
-- (docs/audit.md#direct-calls).
--
-- evidence_direct_calls holds the answer kept under a key: the first
-- request's fingerprint (the same key with other arguments is CONFLICT, the
-- same arguments get this envelope again) and the envelope given, which
-- names its snapshot. Like the snapshots it is append-only, and the runtime
-- role only reads it: rows come from evidence_append_direct.
-- +goose Up
CREATE TABLE evidence_direct_calls (
    chain_key    text PRIMARY KEY CHECK (chain_key ~ '^direct:[0-9a-f]{64}$'),
    tool         text NOT NULL,
    fingerprint  text NOT NULL CHECK (fingerprint ~ '^sha256:[0-9a-f]{64}$'),
    snapshot_id  text NOT NULL UNIQUE REFERENCES evidence_snapshots (snapshot_id),
    envelope     jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX evidence_direct_calls_created ON evidence_direct_calls (created_at);

CREATE TRIGGER evidence_direct_calls_append_only
    BEFORE UPDATE OR DELETE ON evidence_direct_calls
    FOR EACH ROW EXECUTE FUNCTION evidence_forbid_change();
CREATE TRIGGER evidence_direct_calls_no_truncate
    BEFORE TRUNCATE ON evidence_direct_calls
    FOR EACH STATEMENT EXECUTE FUNCTION evidence_forbid_change();

REVOKE ALL ON evidence_direct_calls FROM cartwright_runtime;
GRANT SELECT ON evidence_direct_calls TO cartwright_runtime;

-- One direct call's evidence in one statement: under the chain's lock, the
-- answer already kept under the key if there is one (nothing is written:
-- the caller answers it, or CONFLICT when the fingerprints differ); else
-- evidence_append, and when the answer is to be kept (p_keep: an answer or
-- a refusal that is not retryable and not INVALID_ARGUMENT,
-- docs/envelope.md#idempotency) its binding.
-- +goose StatementBegin
CREATE FUNCTION evidence_append_direct(
    p_fingerprint text, p_envelope jsonb, p_keep boolean,
    p_lock_class integer, p_snapshot_id text, p_dedupe_key text, p_chain_key text, p_tool text,
    p_tool_version text, p_build text, p_workflow_id text, p_run_id text, p_activity_id text,
    p_activity_type text, p_attempt integer, p_request_id text, p_correlation_id text,
    p_user_id_hash text, p_input_digest text, p_output jsonb, p_output_hash text,
    p_raw_ciphertext bytea, p_raw_nonce bytea, p_raw_key_id text, p_ruleset_version text,
    p_ttl_seconds integer, p_status text, p_created_at timestamptz, p_trace_id text,
    p_hash_head bytea, p_hash_tail bytea)
RETURNS TABLE (r_bound boolean, r_fingerprint text, r_envelope jsonb, r_reused boolean, r_snapshot_id text,
    r_chain_seq bigint, r_content_hash text, r_chain_hash text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v record;
BEGIN
    IF p_chain_key !~ '^direct:' OR p_activity_type <> 'direct' OR p_workflow_id <> '' THEN
        RAISE EXCEPTION 'evidence_append_direct: % is not a direct call''s chain', p_chain_key;
    END IF;
    PERFORM pg_advisory_xact_lock(p_lock_class, hashtext(p_chain_key));
    RETURN QUERY SELECT true, d.fingerprint, d.envelope, false, d.snapshot_id, 0::bigint, ''::text, ''::text
        FROM evidence_direct_calls d WHERE d.chain_key = p_chain_key;
    IF FOUND THEN
        RETURN;
    END IF;
    SELECT * INTO v FROM evidence_append(p_lock_class, p_snapshot_id, p_dedupe_key, p_chain_key, p_tool,
        p_tool_version, p_build, p_workflow_id, p_run_id, p_activity_id, p_activity_type, p_attempt, p_request_id,
        p_correlation_id, p_user_id_hash, p_input_digest, p_output, p_output_hash, p_raw_ciphertext, p_raw_nonce,
        p_raw_key_id, p_ruleset_version, p_ttl_seconds, p_status, p_created_at, p_trace_id, p_hash_head, p_hash_tail);
    IF p_keep AND NOT v.r_reused THEN
        INSERT INTO evidence_direct_calls (chain_key, tool, fingerprint, snapshot_id, envelope)
        VALUES (p_chain_key, p_tool, p_fingerprint, v.r_snapshot_id, p_envelope);
    END IF;
    RETURN QUERY SELECT false, p_fingerprint, NULL::jsonb, v.r_reused, v.r_snapshot_id, v.r_chain_seq,
        v.r_content_hash, v.r_chain_hash;
END;
$$;
-- +goose StatementEnd
REVOKE EXECUTE ON FUNCTION evidence_append_direct(text, jsonb, boolean, integer, text, text, text, text, text, text,
    text, text, text, text, integer, text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text,
    timestamptz, text, bytea, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION evidence_append_direct(text, jsonb, boolean, integer, text, text, text, text, text, text,
    text, text, text, text, integer, text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text,
    timestamptz, text, bytea, bytea) TO cartwright_runtime;

-- +goose Down
DROP FUNCTION evidence_append_direct(text, jsonb, boolean, integer, text, text, text, text, text, text,
    text, text, text, text, integer, text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text,
    timestamptz, text, bytea, bytea);
DROP TABLE evidence_direct_calls;
