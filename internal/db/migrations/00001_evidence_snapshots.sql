-- Evidence snapshots (docs/evidence.md#snapshot): one row per completed
-- tool call. Rows of one workflow form a hash chain (chain_key = workflow
-- id, or "request:<id>" outside an activity): chain_hash =
-- sha256(prev_chain_hash || content_hash), chain_seq counts from 1.
-- Output is the sanitised data in clear; a raw output holding PII exists
-- only as AES-256-GCM ciphertext with its nonce and key id.
-- +goose Up
CREATE TABLE evidence_snapshots (
    snapshot_id      text PRIMARY KEY CHECK (snapshot_id ~ '^ev_[0-9A-HJKMNP-TV-Z]{26}$'),
    dedupe_key       text NOT NULL UNIQUE,
    chain_key        text NOT NULL CHECK (chain_key <> ''),
    chain_seq        bigint NOT NULL CHECK (chain_seq >= 1),
    tool             text NOT NULL,
    tool_version     text NOT NULL,
    build            text NOT NULL,
    workflow_id      text NOT NULL,
    run_id           text NOT NULL,
    activity_id      text NOT NULL,
    activity_type    text NOT NULL,
    attempt          integer NOT NULL,
    request_id       text NOT NULL,
    correlation_id   text NOT NULL,
    user_id_hash     text NOT NULL,
    input_digest     text NOT NULL,
    output           jsonb NOT NULL,
    output_hash      text NOT NULL CHECK (output_hash ~ '^sha256:[0-9a-f]{64}$'),
    raw_ciphertext   bytea,
    raw_nonce        bytea,
    raw_key_id       text,
    ruleset_version  text NOT NULL,
    ttl_seconds      integer NOT NULL CHECK (ttl_seconds >= 0),
    status           text NOT NULL,
    created_at       timestamptz NOT NULL,
    content_hash     text NOT NULL CHECK (content_hash ~ '^sha256:[0-9a-f]{64}$'),
    prev_chain_hash  text NOT NULL,
    chain_hash       text NOT NULL CHECK (chain_hash ~ '^sha256:[0-9a-f]{64}$'),
    recorded_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chain_key, chain_seq),
    CHECK ((raw_ciphertext IS NULL) = (raw_nonce IS NULL) AND (raw_nonce IS NULL) = (raw_key_id IS NULL))
);

-- Lookups: the auditor by workflow, reconcile by correlation id, the
-- store's "same answer from an earlier attempt" reuse by activity.
CREATE INDEX evidence_snapshots_activity ON evidence_snapshots (workflow_id, run_id, activity_id, tool);
CREATE INDEX evidence_snapshots_correlation ON evidence_snapshots (correlation_id, tool);

-- The newest link of every chain, so verify also notices a deleted tail.
CREATE TABLE evidence_chain_heads (
    chain_key   text PRIMARY KEY,
    last_seq    bigint NOT NULL,
    last_hash   text NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE evidence_chain_heads;
DROP TABLE evidence_snapshots;
