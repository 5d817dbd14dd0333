-- Stripe webhook events already handled, for deduplication by event id:
-- Stripe delivers at least once and retries for up to three days, so the
-- receiver inserts the id first (insert-if-absent) and acts only when the
-- insert won. Rows older than the retry window may be pruned.
-- +goose Up
CREATE TABLE stripe_webhook_events (
    event_id    text PRIMARY KEY CHECK (event_id ~ '^evt_[A-Za-z0-9_]{1,255}$'),
    event_type  text NOT NULL,
    account_id  text,
    livemode    boolean NOT NULL DEFAULT false,
    -- what the receiver did: signalled the onboarding workflow, or ignored
    -- an event for an account no merchant owns.
    outcome     text NOT NULL CHECK (outcome IN ('signalled', 'ignored_unknown_account')),
    workflow_id text,
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stripe_webhook_events_received_idx ON stripe_webhook_events (received_at);

-- +goose Down
DROP TABLE stripe_webhook_events;
