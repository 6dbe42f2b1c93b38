-- +goose Up
-- Claims and retries update a delivery in place (HOT, heap-only tuple
-- updates): nothing indexes next_attempt_at any more, and pages keep room
-- for the new row version (issue 11 item 2, docs/DECISIONS.md D-M2-26-44).
-- webhook_deliveries_due_idx served no query: the head of a subscription is
-- found through webhook_deliveries_head_idx, and every due time has its
-- job. With it gone, a claim (attempt + 1) and a retry (next_attempt_at)
-- change no indexed column, so PostgreSQL writes no new index entries and
-- the head lookup meets no stale ones; only the end of a delivery (status
-- leaves the head index's predicate) still writes index entries.
DROP INDEX webhook_deliveries_due_idx;
ALTER TABLE webhook_deliveries SET (fillfactor = 80);
-- The subscription row takes the lease and the record of every attempt.
ALTER TABLE webhook_subscriptions SET (fillfactor = 70);

-- +goose Down
ALTER TABLE webhook_subscriptions RESET (fillfactor);
ALTER TABLE webhook_deliveries RESET (fillfactor);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
