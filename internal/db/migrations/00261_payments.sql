-- Payments of written draft orders (docs/payments.md): one Stripe
-- PaymentIntent per draft, recorded by checkout.create_payment once Stripe
-- answered. The webhook receiver finds the settle run of a
-- payment_intent.* event here, by the intent's id, never by what the
-- event's metadata claims. status mirrors Stripe's last known one.
-- +goose Up
CREATE TABLE payments (
    draft_order_id      text PRIMARY KEY REFERENCES draft_orders (draft_order_id),
    payment_intent_id   text NOT NULL UNIQUE CHECK (payment_intent_id ~ '^pi_[A-Za-z0-9]{1,64}$'),
    workflow_id         text NOT NULL,
    merchant_id         text NOT NULL REFERENCES merchants (merchant_id),
    destination_account text NOT NULL,
    amount_minor        bigint NOT NULL CHECK (amount_minor >= 0),
    currency            text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    fee_minor           bigint NOT NULL CHECK (fee_minor >= 0 AND fee_minor <= amount_minor),
    status              text NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);

-- A payment event for an intent no draft order made is recorded and
-- ignored, like an account event for an account no merchant owns.
ALTER TABLE stripe_webhook_events DROP CONSTRAINT stripe_webhook_events_outcome_check;
ALTER TABLE stripe_webhook_events ADD CONSTRAINT stripe_webhook_events_outcome_check
    CHECK (outcome IN ('signalled', 'ignored_unknown_account', 'ignored_unknown_payment'));

-- +goose Down
ALTER TABLE stripe_webhook_events DROP CONSTRAINT stripe_webhook_events_outcome_check;
ALTER TABLE stripe_webhook_events ADD CONSTRAINT stripe_webhook_events_outcome_check
    CHECK (outcome IN ('signalled', 'ignored_unknown_account'));
DROP TABLE payments;
