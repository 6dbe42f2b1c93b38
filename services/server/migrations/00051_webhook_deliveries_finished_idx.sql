-- +goose Up
-- Retention of webhook deliveries (issue 13 item 3): the purge job deletes
-- finished rows (succeeded, failed, dead) whose updated_at, the time they
-- finished, lies before now - retention.webhook_deliveries, oldest first in
-- batches of retention.batch_size. This partial index serves exactly that
-- scan, so a batch reads only the rows it deletes and never the pending
-- rows or a subscription's other deliveries.
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (updated_at) WHERE status <> 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_finished_idx;
