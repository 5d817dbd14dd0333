-- The audit reads every draft_orders row that names the workflow it audits
-- (docs/audit.md#business-rows), a page of workflows at a time when it
-- audits many (docs/performance.md#audit-rate). Without an index each read
-- scanned the whole table: the audit of every order of a day grew with the
-- square of the day's orders.
-- +goose Up
CREATE INDEX draft_orders_workflow ON draft_orders (workflow_id);

-- +goose Down
DROP INDEX draft_orders_workflow;
