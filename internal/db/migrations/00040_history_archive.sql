-- History archive (docs/audit.md#histories): Temporal deletes a closed workflow's
-- history after the namespace retention, so the ArchiveHistories schedule
-- copies every closed run here, and an audit falls back to this table when
-- the server answers NotFound. The history is the proto JSON of
-- temporal.api.history.v1.History (the format `temporal workflow show
-- --output json` writes and client.HistoryFromJSON reads), stored only
-- AES-256-GCM encrypted with the evidence key (key_id names it), bound to
-- its workflow and run id: histories hold PII (addresses in workflow and
-- activity inputs), and every read is logged in history_archive_reads.
-- history_sha256 is over the clear JSON, so an edit is visible even to a
-- reader holding the key.
-- +goose Up
CREATE TABLE history_archive (
    workflow_id     text NOT NULL CHECK (workflow_id <> ''),
    run_id          text NOT NULL CHECK (run_id <> ''),
    workflow_type   text NOT NULL,
    task_queue      text NOT NULL,
    close_status    text NOT NULL,
    started_at      timestamptz,
    closed_at       timestamptz NOT NULL,
    event_count     integer NOT NULL CHECK (event_count >= 3),
    history_nonce   bytea NOT NULL,
    history_sealed  bytea NOT NULL,
    key_id          text NOT NULL,
    history_sha256  text NOT NULL CHECK (history_sha256 ~ '^sha256:[0-9a-f]{64}$'),
    archived_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_id, run_id)
);

-- "The newest archived run of this workflow id" for an audit without a run id.
CREATE INDEX history_archive_latest ON history_archive (workflow_id, closed_at DESC);
CREATE INDEX history_archive_closed ON history_archive (closed_at);

-- An archived history is evidence too: the application never changes or
-- removes one (a superuser can still; the GCM tag or the sha256 then no
-- longer matches).
-- +goose StatementBegin
CREATE FUNCTION history_archive_forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER history_archive_append_only
    BEFORE UPDATE OR DELETE ON history_archive
    FOR EACH ROW EXECUTE FUNCTION history_archive_forbid_change();
CREATE TRIGGER history_archive_no_truncate
    BEFORE TRUNCATE ON history_archive
    FOR EACH STATEMENT EXECUTE FUNCTION history_archive_forbid_change();

-- Who read which archived history, and why (the decrypting read path).
CREATE TABLE history_archive_reads (
    read_id      bigserial PRIMARY KEY,
    workflow_id  text NOT NULL,
    run_id       text NOT NULL,
    reader       text NOT NULL CHECK (reader <> ''),
    reason       text NOT NULL CHECK (reason <> ''),
    read_at      timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (workflow_id, run_id) REFERENCES history_archive (workflow_id, run_id)
);

-- How far each archive scope (a task queue) has been swept: the next pass
-- lists runs closed since archived_until minus an overlap, so a run that
-- reached visibility late is still found, and a pass that failed half way
-- is simply repeated (inserts are idempotent).
CREATE TABLE history_archive_watermarks (
    scope           text PRIMARY KEY,
    archived_until  timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE history_archive_watermarks;
DROP TABLE history_archive_reads;
DROP TRIGGER history_archive_no_truncate ON history_archive;
DROP TRIGGER history_archive_append_only ON history_archive;
DROP FUNCTION history_archive_forbid_change();
DROP TABLE history_archive;
