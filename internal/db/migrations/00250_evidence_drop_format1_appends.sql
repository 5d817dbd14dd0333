-- 2026-11-28: the format-1 append functions go (docs/evidence.md#content-hash-formats).
-- evidence_append, evidence_append_batch and evidence_append_direct (migrations
-- 00080, 00081, 00180) stayed for builds from before migration 00190
-- (2026-11-26 00:27 UTC) while they drained; a build drains within about a day
-- (docs/versioning.md#shipping-a-change-that-breaks-determinism), so none is
-- supported any more and nothing calls them. The rows they wrote stay as they
-- are, format 1, and keep verifying: only the writers go.
-- +goose Up
DROP FUNCTION evidence_append_direct(text, jsonb, boolean, integer, text, text, text, text, text, text,
    text, text, text, text, integer, text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text,
    timestamptz, text, bytea, bytea);
DROP FUNCTION evidence_append_batch(integer, text[], text[], text[], text[], text[], text[], text[], text[], text[],
    text[], integer[], text[], text[], text[], text[], text[], text[], bytea[], bytea[], text[], text[], integer[],
    text[], timestamptz[], text[], bytea[], bytea[]);
DROP FUNCTION evidence_append(integer, text, text, text, text, text, text, text, text, text, text, integer,
    text, text, text, text, jsonb, text, bytea, bytea, text, text, integer, text, timestamptz, text, bytea, bytea);

-- +goose Down
-- Not undone: a build that writes format 1 is retired, and no supported
-- build calls these functions.
SELECT 1;
