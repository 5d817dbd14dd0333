-- MCP tokens that expire, and when each was last used (docs/mcp.md#tokens).
-- expires_at NULL is a token without an end (until revoked); the gateway
-- refuses a token past its expires_at like a revoked one. last_used_at is
-- written at most once a minute per token (the lookup updates it only when
-- it is older), so a busy agent does not turn every call into a write.
-- +goose Up
ALTER TABLE mcp_tokens
    ADD COLUMN expires_at   timestamptz,
    ADD COLUMN last_used_at timestamptz,
    ADD CONSTRAINT mcp_tokens_expiry_after_creation CHECK (expires_at IS NULL OR expires_at > created_at);

-- +goose Down
ALTER TABLE mcp_tokens
    DROP CONSTRAINT mcp_tokens_expiry_after_creation,
    DROP COLUMN last_used_at,
    DROP COLUMN expires_at;
