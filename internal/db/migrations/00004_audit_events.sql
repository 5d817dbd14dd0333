-- Audit events (docs/evidence.md#two-phase-audit). Side-effecting tools use the
-- two-phase protocol: a 'pending' row before the call, finalised once to
-- 'success' or 'failed' (WHERE status='pending'). A rejection is one final row
-- (action 'reject', status 'success', never pending). Failed and success are
-- terminal: the trigger refuses any change to a row that is no longer pending,
-- any change of its identity, and every DELETE.
-- +goose Up
CREATE TABLE audit_events (
    audit_id        bigserial PRIMARY KEY,
    correlation_id  text NOT NULL CHECK (correlation_id ~ '^corr-[0-9a-f]{16}$'),
    two_phase       boolean NOT NULL,
    tool            text NOT NULL CHECK (tool <> ''),
    user_id_hash    text NOT NULL,
    actor_type      text NOT NULL,
    action          text NOT NULL CHECK (action IN ('allow', 'redirect', 'reject')),
    reason          text NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'success', 'failed')),
    payload_sha     text NOT NULL CHECK (payload_sha = '' OR payload_sha ~ '^[0-9a-f]{64}$'),
    workflow_id     text NOT NULL,
    run_id          text NOT NULL,
    activity_id     text NOT NULL,
    evidence_refs   jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(evidence_refs) = 'object'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    finalized_at    timestamptz,
    CHECK (two_phase OR status <> 'pending'),
    CHECK (status <> 'failed' OR evidence_refs ?| ARRAY['error_type', 'reconcile_action']),
    CHECK ((status = 'pending') = (finalized_at IS NULL))
);

-- One two-phase row per correlation id (a retried activity finds its own
-- pending row); one reject per correlation id and tool.
CREATE UNIQUE INDEX audit_events_two_phase ON audit_events (correlation_id) WHERE two_phase;
CREATE UNIQUE INDEX audit_events_reject ON audit_events (correlation_id, tool) WHERE NOT two_phase;
CREATE INDEX audit_events_pending ON audit_events (created_at) WHERE status = 'pending';
CREATE INDEX audit_events_success ON audit_events (finalized_at) WHERE two_phase AND status = 'success';

-- +goose StatementBegin
CREATE FUNCTION audit_events_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'audit_events is append-only: DELETE refused' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.status <> 'pending' THEN
        RAISE EXCEPTION 'audit event % is final (%): it cannot change', OLD.audit_id, OLD.status
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF (NEW.audit_id, NEW.correlation_id, NEW.two_phase, NEW.tool, NEW.user_id_hash, NEW.actor_type, NEW.action,
        NEW.payload_sha, NEW.workflow_id, NEW.run_id, NEW.activity_id, NEW.created_at)
       IS DISTINCT FROM
       (OLD.audit_id, OLD.correlation_id, OLD.two_phase, OLD.tool, OLD.user_id_hash, OLD.actor_type, OLD.action,
        OLD.payload_sha, OLD.workflow_id, OLD.run_id, OLD.activity_id, OLD.created_at) THEN
        RAISE EXCEPTION 'audit event %: only status, reason and evidence_refs may change', OLD.audit_id
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER audit_events_guard
    BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_guard();
CREATE TRIGGER audit_events_no_truncate
    BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION evidence_forbid_change();

-- +goose Down
DROP TABLE audit_events;
DROP FUNCTION audit_events_guard();
