-- The trace id of the tool call that wrote a snapshot (docs/operators.md#observability): the W3C
-- trace id of the call's span, so an operator goes from a trace in the
-- tracing backend to its evidence rows and back. NULL for rows written
-- untraced or before this column. It is not part of the content hash
-- (evidence/record.go): it locates a call, it proves nothing.
-- +goose Up
ALTER TABLE evidence_snapshots ADD COLUMN trace_id text
    CHECK (trace_id ~ '^[0-9a-f]{32}$');
CREATE INDEX evidence_snapshots_trace ON evidence_snapshots (trace_id) WHERE trace_id IS NOT NULL;

-- +goose Down
DROP INDEX evidence_snapshots_trace;
ALTER TABLE evidence_snapshots DROP COLUMN trace_id;
