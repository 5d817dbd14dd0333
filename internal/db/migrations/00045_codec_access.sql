-- The codec server (client/codec/codecserver) shows staff the decrypted
-- payloads of Temporal histories; every decode is logged in the same
-- access log as raw evidence reads, with the workflow the caller names
-- (when it names one) instead of a snapshot. Staff authenticate with a
-- bearer token; only its SHA-256 is stored.
-- +goose Up
ALTER TABLE evidence_access_log
    ALTER COLUMN snapshot_id DROP NOT NULL,
    ADD COLUMN kind text NOT NULL DEFAULT 'evidence_read'
        CHECK (kind IN ('evidence_read', 'payload_decode')),
    ADD COLUMN namespace text,
    ADD COLUMN workflow_id text,
    ADD CONSTRAINT evidence_access_log_subject
        CHECK (kind <> 'evidence_read' OR snapshot_id IS NOT NULL);
CREATE INDEX evidence_access_log_workflow ON evidence_access_log (workflow_id) WHERE workflow_id IS NOT NULL;

CREATE TABLE staff_tokens (
    token_sha256 bytea PRIMARY KEY CHECK (length(token_sha256) = 32),
    staff_id     text NOT NULL REFERENCES staff (staff_id),
    label        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX staff_tokens_staff ON staff_tokens (staff_id);

-- +goose Down
DROP TABLE staff_tokens;
ALTER TABLE evidence_access_log
    DROP CONSTRAINT evidence_access_log_subject,
    DROP COLUMN workflow_id,
    DROP COLUMN namespace,
    DROP COLUMN kind,
    ALTER COLUMN snapshot_id SET NOT NULL;
