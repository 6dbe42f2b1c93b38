-- +goose Up
-- wake_up_at is when the latest lease wake-up a delivery run of the
-- subscription scheduled is due (ADR 0087): the wake-up stays after its run
-- ended, and a later run whose leases all end at least one lease before
-- that time relies on it instead of inserting its own. Written only in the
-- unit of work that inserts that wake-up; NULL before any. No index reads
-- it, so the updates of a claim stay HOT (00046).
ALTER TABLE webhook_subscriptions ADD COLUMN wake_up_at timestamptz NULL;

-- +goose Down
ALTER TABLE webhook_subscriptions DROP COLUMN wake_up_at;
