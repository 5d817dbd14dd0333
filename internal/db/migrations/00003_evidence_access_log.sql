-- Every read of raw (encrypted) evidence leaves a row here, written in the
-- same transaction as the read and before the plaintext is returned.
-- Append-only like the snapshots.
-- +goose Up
CREATE TABLE evidence_access_log (
    access_id    bigserial PRIMARY KEY,
    snapshot_id  text NOT NULL REFERENCES evidence_snapshots (snapshot_id),
    reader       text NOT NULL CHECK (btrim(reader) <> ''),
    reason       text NOT NULL CHECK (btrim(reason) <> ''),
    accessed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX evidence_access_log_snapshot ON evidence_access_log (snapshot_id);

CREATE TRIGGER evidence_access_log_append_only
    BEFORE UPDATE OR DELETE ON evidence_access_log
    FOR EACH ROW EXECUTE FUNCTION evidence_forbid_change();
CREATE TRIGGER evidence_access_log_no_truncate
    BEFORE TRUNCATE ON evidence_access_log
    FOR EACH STATEMENT EXECUTE FUNCTION evidence_forbid_change();

-- +goose Down
DROP TABLE evidence_access_log;
