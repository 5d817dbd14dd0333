-- A codec-server sign-in is issued from a staff token, never written
-- (docs/support.md#codec-server-sign-in, docs/evidence.md#database-roles):
-- the runtime role (the worker's codec server) opens a session only through
-- codec_session_open, which takes the token itself, not its hash, and takes
-- the staff member from the token's own row. The runtime reads the token
-- hashes; were it allowed to INSERT sessions it could open one for any
-- active member, admins included, and have the codec server seal decisions
-- in their name. The dev stack's shared secret opens sessions of its reader
-- 'dev-secret' only (client/codec/codecserver DevSecretReader), which decode
-- and never decide. Sign-out keeps its UPDATE of revoked_at.
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION codec_session_open(p_session_sha256 bytea, p_token text, p_ttl_seconds double precision)
RETURNS TABLE (r_staff_id text, r_expires_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    v_sum bytea;
BEGIN
    IF p_ttl_seconds IS NULL OR p_ttl_seconds <= 0 THEN
        RAISE EXCEPTION 'codec_session_open: a session needs a positive lifetime';
    END IF;
    IF p_token IS NULL THEN
        RETURN QUERY INSERT INTO codec_sessions AS s (session_sha256, staff_id, token_sha256, expires_at)
            VALUES (p_session_sha256, 'dev-secret', NULL, now() + make_interval(secs => p_ttl_seconds))
            RETURNING s.staff_id, s.expires_at;
        RETURN;
    END IF;
    v_sum := sha256(convert_to(p_token, 'UTF8'));
    RETURN QUERY INSERT INTO codec_sessions AS s (session_sha256, staff_id, token_sha256, expires_at)
        SELECT p_session_sha256, t.staff_id, v_sum, least(now() + make_interval(secs => p_ttl_seconds), t.expires_at)
        FROM staff_tokens t JOIN staff m ON m.staff_id = t.staff_id
        WHERE t.token_sha256 = v_sum AND t.revoked_at IS NULL AND t.expires_at > now() AND m.active
        RETURNING s.staff_id, s.expires_at;
END
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION codec_session_open(bytea, text, double precision) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION codec_session_open(bytea, text, double precision) TO cartwright_runtime;

REVOKE INSERT, UPDATE, DELETE ON codec_sessions FROM cartwright_runtime;
GRANT UPDATE (revoked_at) ON codec_sessions TO cartwright_runtime;

-- +goose Down
GRANT INSERT, UPDATE, DELETE ON codec_sessions TO cartwright_runtime;
DROP FUNCTION codec_session_open(bytea, text, double precision);
