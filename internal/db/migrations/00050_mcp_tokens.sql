-- Bearer tokens of the MCP gateway (docs/mcp.md#callers): each maps to an agent actor.
-- Only the SHA-256 of a token is stored; the token itself is printed once
-- by `starter mcp token create`. tools is the actor's allow-list (empty:
-- every tool); tenant, where set, is the user the actor acts for and scopes
-- what it may read. Revoking sets revoked_at; rows are never deleted, so an
-- old evidence row's actor can always be found.
-- +goose Up
CREATE TABLE mcp_tokens (
    token_id         text PRIMARY KEY CHECK (token_id ~ '^mt_[0-9a-f]{16}$'),
    token_hash       text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    actor_id         text NOT NULL CHECK (actor_id ~ '^[a-z][a-z0-9_-]{1,62}$'),
    tenant           text CHECK (tenant ~ '^[A-Za-z][A-Za-z0-9_-]{0,63}$'),
    tools            text[] NOT NULL DEFAULT '{}',
    calls_per_minute integer NOT NULL DEFAULT 120 CHECK (calls_per_minute > 0),
    bytes_per_minute integer NOT NULL DEFAULT 4194304 CHECK (bytes_per_minute > 0),
    created_at       timestamptz NOT NULL DEFAULT now(),
    revoked_at       timestamptz
);
CREATE INDEX mcp_tokens_actor ON mcp_tokens (actor_id);

-- +goose Down
DROP TABLE mcp_tokens;
