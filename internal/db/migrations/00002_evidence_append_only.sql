-- Evidence is append-only for the application: UPDATE, DELETE and TRUNCATE
-- raise. (A superuser can still disable the trigger; verify detects what
-- such an edit leaves behind.)
-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION evidence_forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER evidence_snapshots_append_only
    BEFORE UPDATE OR DELETE ON evidence_snapshots
    FOR EACH ROW EXECUTE FUNCTION evidence_forbid_change();
CREATE TRIGGER evidence_snapshots_no_truncate
    BEFORE TRUNCATE ON evidence_snapshots
    FOR EACH STATEMENT EXECUTE FUNCTION evidence_forbid_change();

-- +goose Down
DROP TRIGGER evidence_snapshots_no_truncate ON evidence_snapshots;
DROP TRIGGER evidence_snapshots_append_only ON evidence_snapshots;
DROP FUNCTION evidence_forbid_change();
