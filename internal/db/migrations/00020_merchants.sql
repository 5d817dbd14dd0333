-- Merchants of the platform and their Stripe connected accounts
-- (docs/tools.md#onboarding-tools). The tool merchant.get_row reads it in a
-- read-only transaction and never returns the PII columns (display name,
-- contact e-mail and phone).
-- +goose Up
CREATE TABLE merchants (
    merchant_id       text PRIMARY KEY CHECK (merchant_id ~ '^m_[a-z0-9_]{3,60}$'),
    stripe_account_id text UNIQUE CHECK (stripe_account_id ~ '^acct_[A-Za-z0-9]{1,64}$'),
    -- PII: a sole trader's business name is often their own name.
    display_name      text NOT NULL,
    contact_email     text,
    contact_phone     text,
    country           text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
    business_type     text NOT NULL CHECK (business_type IN ('individual', 'company', 'non_profit', 'government_entity')),
    onboarding_status text NOT NULL DEFAULT 'not_started'
        CHECK (onboarding_status IN ('not_started', 'in_progress', 'restricted', 'complete')),
    -- version goes up on every change; callers compare it instead of the row.
    version           bigint NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

-- A user session that belongs to a merchant. Only the SHA-256 of the
-- session id is kept: a session id is a bearer credential, and a copy of
-- this table must not let anyone act as the merchant.
CREATE TABLE merchant_sessions (
    session_hash bytea PRIMARY KEY CHECK (length(session_hash) = 32),
    merchant_id  text NOT NULL REFERENCES merchants (merchant_id) ON DELETE CASCADE,
    expires_at   timestamptz NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX merchant_sessions_merchant_idx ON merchant_sessions (merchant_id);

-- Local sample merchants (stripe-mock accepts any account id). Production
-- rows come from the platform's sign-up flow.
INSERT INTO merchants (merchant_id, stripe_account_id, display_name, contact_email, contact_phone, country, business_type, onboarding_status) VALUES
    ('m_acme_goods',   'acct_1CwAcmeGoods0001',  'Acme Goods Ltd',      'ops@acme-goods.example',  '+44 20 7946 0018', 'GB', 'company',    'in_progress'),
    ('m_blue_harbor',  'acct_1CwBlueHarbor001',  'Blue Harbor Imports', 'hello@blueharbor.example', '+1 415 555 0134', 'US', 'company',    'restricted'),
    ('m_jane_crafts',  'acct_1CwJaneCrafts001',  'Jane Doe',            'jane@crafts.example',      '+1 212 555 0199', 'US', 'individual', 'complete'),
    ('m_cedar_studio', NULL,                     'Cedar Studio',        'team@cedar.example',       NULL,              'DE', 'company',    'not_started');

INSERT INTO merchant_sessions (session_hash, merchant_id, expires_at) VALUES
    (sha256('sess_demo_acme_0001'::bytea),  'm_acme_goods',   now() + interval '3650 days'),
    (sha256('sess_demo_blue_0001'::bytea),  'm_blue_harbor',  now() + interval '3650 days'),
    (sha256('sess_demo_jane_0001'::bytea),  'm_jane_crafts',  now() + interval '3650 days'),
    (sha256('sess_demo_cedar_0001'::bytea), 'm_cedar_studio', now() + interval '3650 days'),
    (sha256('sess_demo_expired_01'::bytea), 'm_acme_goods',   now() - interval '1 day');

-- +goose Down
DROP TABLE merchant_sessions;
DROP TABLE merchants;
