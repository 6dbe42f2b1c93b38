-- +goose Up
-- A delivery's finish time gets its own column (docs/DECISIONS.md
-- D-M2-26-45): finished_at is set when the status leaves pending and
-- cleared by a redelivery. The retention purge (00051) indexed updated_at,
-- which every claim and retry writes, so each of them became an update with
-- new index entries again (00046 had made them heap-only). finished_at
-- never changes while a delivery is pending, so claims and retries stay
-- heap-only, and the purge reads the finished rows through their own index.
ALTER TABLE webhook_deliveries ADD COLUMN finished_at timestamptz NULL;
UPDATE webhook_deliveries SET finished_at = updated_at WHERE status <> 'pending';
DROP INDEX webhook_deliveries_finished_idx;
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (finished_at) WHERE finished_at IS NOT NULL;

-- +goose Down
DROP INDEX webhook_deliveries_finished_idx;
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (updated_at) WHERE status <> 'pending';
ALTER TABLE webhook_deliveries DROP COLUMN finished_at;
