-- Refunds of paid draft orders (docs/payments.md#refunds): one row per
-- refund run, written by checkout.refund_payment once Stripe answered.
-- The sum of a payment's refunds never exceeds what was charged: the tool
-- checks it with the payment row locked. Staff with the new role
-- 'refunds' (or admin) decide refunds above the configured amount.
-- +goose Up
ALTER TABLE staff DROP CONSTRAINT staff_role_check;
ALTER TABLE staff ADD CONSTRAINT staff_role_check CHECK (role IN ('support', 'compliance', 'admin', 'refunds'));
INSERT INTO staff (staff_id, display_name, role) VALUES ('rita.refunds', 'Rita (refunds)', 'refunds');

CREATE TABLE refunds (
    refund_run       text PRIMARY KEY,
    draft_order_id   text NOT NULL REFERENCES payments (draft_order_id),
    stripe_refund_id text NOT NULL UNIQUE CHECK (stripe_refund_id ~ '^re_[A-Za-z0-9]{1,64}$'),
    amount_minor     bigint NOT NULL CHECK (amount_minor > 0),
    currency         text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    lines            jsonb NOT NULL,
    status           text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_draft ON refunds (draft_order_id);

-- +goose Down
DROP TABLE refunds;
DELETE FROM staff WHERE role = 'refunds';
ALTER TABLE staff DROP CONSTRAINT staff_role_check;
ALTER TABLE staff ADD CONSTRAINT staff_role_check CHECK (role IN ('support', 'compliance', 'admin'));
