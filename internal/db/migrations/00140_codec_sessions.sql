-- Browser sign-ins at the codec server (docs/support.md#codec-server-sign-in):
-- the cookie holds a random session id and only its SHA-256 is stored
-- here, with the staff token it was opened with (revoking or expiring the
-- token ends the session) and its own expiry. Every worker replica's codec
-- server reads the same table, so a sign-out or revocation holds
-- everywhere at once. token_sha256 is NULL for the dev stack's shared
-- secret, which has no token row.
-- +goose Up
CREATE TABLE codec_sessions (
    session_sha256 bytea PRIMARY KEY CHECK (length(session_sha256) = 32),
    staff_id       text NOT NULL,
    token_sha256   bytea CHECK (token_sha256 IS NULL OR length(token_sha256) = 32),
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    revoked_at     timestamptz
);
CREATE INDEX codec_sessions_staff ON codec_sessions (staff_id) WHERE revoked_at IS NULL;

-- +goose Down
DROP TABLE codec_sessions;
