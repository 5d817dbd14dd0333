-- Support staff who may approve or reject workflows waiting for a human
-- (docs/approvals.md#recording-a-decision). An approval signal naming anyone
-- else is refused.
-- +goose Up
CREATE TABLE staff (
    staff_id    text PRIMARY KEY CHECK (staff_id ~ '^[a-z][a-z0-9._-]{1,62}$'),
    display_name text NOT NULL,
    role        text NOT NULL CHECK (role IN ('support', 'compliance', 'admin')),
    active      boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- The local team; production loads its roster from the staff directory.
INSERT INTO staff (staff_id, display_name, role) VALUES
    ('alice.support', 'Alice (support)', 'support'),
    ('bob.compliance', 'Bob (compliance)', 'compliance'),
    ('carol.admin', 'Carol (admin)', 'admin');
INSERT INTO staff (staff_id, display_name, role, active) VALUES
    ('dave.former', 'Dave (left the team)', 'support', false);

-- +goose Down
DROP TABLE staff;
