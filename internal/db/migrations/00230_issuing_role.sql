-- Identities are issued, not written (docs/evidence.md#database-roles): the
-- staff roster, staff tokens and MCP tokens change only through the issuing
-- role, cartwright_issuing, whose login (cartwright_issuer) only the
-- operators' commands use (`starter staff …`, `starter mcp token …`). The
-- runtime role (the worker and the MCP gateway) reads what it verifies and
-- nothing more: it may note a token's last use, never mint a token, promote,
-- reactivate or add a member, or move a token to another tenant.
--
-- Merchants are provisioned by operators (their onboarding rows and the
-- tenant a merchant belongs to); the runtime only reads them under row-level
-- security, so it loses their writes as well.
--
-- Like cartwright_runtime, cartwright_issuing is cluster-wide: an operator
-- creates it once (scripts/lib.sh ensure_pg_roles, the compose init script,
-- deploy/SCALING.md#database-roles) before this migration runs; it fails
-- with "role cartwright_issuing does not exist" until then.
-- +goose Up
REVOKE INSERT, UPDATE, DELETE ON staff, staff_tokens, mcp_tokens FROM cartwright_runtime;
-- REVOKE UPDATE on the table took its column grants too; the lookup's note
-- of a token's last use (docs/mcp.md#tokens) is the one write left.
GRANT UPDATE (last_used_at) ON mcp_tokens TO cartwright_runtime;
REVOKE INSERT, UPDATE, DELETE ON merchants, merchant_sessions FROM cartwright_runtime;

GRANT USAGE ON SCHEMA public TO cartwright_issuing;
-- The roster: add, deactivate, change a role; never delete (evidence and
-- decisions keep naming former members).
GRANT SELECT, INSERT, UPDATE ON staff TO cartwright_issuing;
-- Tokens: issue and revoke; a token row is never rewritten otherwise.
GRANT SELECT, INSERT ON staff_tokens, mcp_tokens TO cartwright_issuing;
GRANT UPDATE (revoked_at) ON staff_tokens, mcp_tokens TO cartwright_issuing;

-- +goose Down
REVOKE ALL ON staff, staff_tokens, mcp_tokens FROM cartwright_issuing;
REVOKE ALL ON SCHEMA public FROM cartwright_issuing;
GRANT INSERT, UPDATE, DELETE ON merchants, merchant_sessions TO cartwright_runtime;
GRANT INSERT, UPDATE, DELETE ON staff, staff_tokens, mcp_tokens TO cartwright_runtime;
