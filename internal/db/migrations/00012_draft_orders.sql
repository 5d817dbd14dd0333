-- Draft orders written by checkout.create_draft_order. One row per
-- idempotency scope (user, tool, idempotency key;
-- docs/envelope.md#idempotency): the unique constraint, not application code,
-- is what makes a repeated or concurrent call return the first draft instead of
-- creating a second.
--
-- No PII in clear (docs/privacy.md#stored-data): the user id is kept as the
-- same salted hash the evidence and audit tables use, and the shipping address
-- as AES-256-GCM ciphertext (nonce and key id beside it, bound to the draft id
-- as associated data). Only country, region and postal code stay in clear,
-- because tax jurisdiction and reporting need them and they do not identify a
-- person on their own. The confirmed total holds no PII.
-- +goose Up
CREATE TABLE draft_orders (
    draft_order_id    text PRIMARY KEY CHECK (draft_order_id ~ '^do_[0-9A-HJKMNP-TV-Z]{26}$'),
    user_id_hash      text NOT NULL CHECK (user_id_hash ~ '^uh_[0-9a-f]{32}$'),
    tool              text NOT NULL,
    idempotency_key   text NOT NULL CHECK (length(idempotency_key) BETWEEN 8 AND 128),
    status            text NOT NULL CHECK (status IN ('open', 'expired', 'converted', 'cancelled')),
    quote_id          text NOT NULL,
    quote_hash        text NOT NULL CHECK (quote_hash ~ '^sha256:[0-9a-f]{64}$'),
    currency          text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    grand_total_minor bigint NOT NULL CHECK (grand_total_minor >= 0),
    total             jsonb NOT NULL,
    ship_to_country   text NOT NULL CHECK (ship_to_country ~ '^[A-Z]{2}$'),
    ship_to_region    text NOT NULL DEFAULT '',
    ship_to_postal    text NOT NULL DEFAULT '',
    ship_to_sealed    bytea NOT NULL,
    ship_to_nonce     bytea NOT NULL,
    ship_to_key_id    text NOT NULL,
    correlation_id    text NOT NULL CHECK (correlation_id ~ '^corr-[0-9a-f]{16}$'),
    workflow_id       text NOT NULL DEFAULT '',
    run_id            text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL,
    expires_at        timestamptz NOT NULL CHECK (expires_at > created_at),
    CONSTRAINT draft_orders_idempotency UNIQUE (user_id_hash, tool, idempotency_key)
);

CREATE INDEX draft_orders_expires ON draft_orders (expires_at) WHERE status = 'open';

-- +goose Down
DROP TABLE draft_orders;
