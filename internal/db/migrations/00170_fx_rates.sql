-- Exchange rates (docs/operators.md#exchange-rates): one row per ECB
-- reference date, the rates as the decimal text the feed published (units
-- per 1 EUR), where they came from (the feed URL without user info or
-- query) and the SHA-256 of the body they were read from. Prices cite a
-- day by its date, so a stored day never changes: the runtime role may
-- add days and read them, never update or delete one.
-- +goose Up
CREATE TABLE fx_rate_days (
    rate_date   date PRIMARY KEY,
    base        text NOT NULL CHECK (base = 'EUR'),
    rates       jsonb NOT NULL CHECK (jsonb_typeof(rates) = 'object' AND rates <> '{}'::jsonb),
    source      text NOT NULL CHECK (length(source) BETWEEN 1 AND 500),
    feed_sha256 bytea NOT NULL CHECK (length(feed_sha256) = 32),
    fetched_at  timestamptz NOT NULL DEFAULT now()
);
REVOKE UPDATE, DELETE ON fx_rate_days FROM cartwright_runtime;

-- +goose Down
DROP TABLE fx_rate_days;
