-- Tenants reach only their own merchants (docs/mcp.md#tenants). Each
-- merchant belongs to at most one tenant (NULL: the platform's own, seen
-- only by callers with platform-wide reach). Row-level security enforces it
-- in PostgreSQL, so a bug in Go cannot hand one tenant another's rows: a
-- transaction sees the merchants of the tenant it names in the setting
-- cartwright.tenant (SET LOCAL / set_config(..., true): it ends with the
-- transaction, so a pooled connection never carries it to the next one),
-- every merchant when it names '*' (backends, staff, agents without a
-- tenant, the webhook receiver), and none when it names nothing. FORCE
-- binds the table's owner as well: the role that runs the service today
-- owns the tables; the runtime role that owns nothing is bound either way.
-- Superusers are never bound (PostgreSQL), which is why the service must not
-- run as one.
-- +goose Up
ALTER TABLE merchants
    ADD COLUMN tenant text CHECK (tenant ~ '^[A-Za-z][A-Za-z0-9_-]{0,63}$');
CREATE INDEX merchants_tenant_idx ON merchants (tenant);

-- The local sample merchants: two tenants, and one merchant of the platform.
UPDATE merchants SET tenant = 'tenant_acme' WHERE merchant_id IN ('m_acme_goods', 'm_cedar_studio');
UPDATE merchants SET tenant = 'tenant_harbor' WHERE merchant_id = 'm_blue_harbor';

ALTER TABLE merchants ENABLE ROW LEVEL SECURITY;
ALTER TABLE merchants FORCE ROW LEVEL SECURITY;
CREATE POLICY merchants_tenant ON merchants
    USING (current_setting('cartwright.tenant', true) = '*'
           OR tenant = nullif(current_setting('cartwright.tenant', true), ''))
    WITH CHECK (current_setting('cartwright.tenant', true) = '*'
           OR tenant = nullif(current_setting('cartwright.tenant', true), ''));

-- +goose Down
DROP POLICY merchants_tenant ON merchants;
ALTER TABLE merchants NO FORCE ROW LEVEL SECURITY;
ALTER TABLE merchants DISABLE ROW LEVEL SECURITY;
DROP INDEX merchants_tenant_idx;
ALTER TABLE merchants DROP COLUMN tenant;
