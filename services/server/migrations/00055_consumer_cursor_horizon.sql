-- +goose Up
-- Appends no longer take a lock held until commit (ADR 0070), so a round may
-- read an event while a lower seq is still in flight. The horizon is what a
-- consumer remembers of a round that stopped at such a gap
-- (internal/sync/domain Settle): the round's own transaction id, taken after
-- its read, and the highest seq it read. Once no transaction older than
-- gap_horizon runs, every seq at or below gap_through is settled.
ALTER TABLE consumer_cursors
    ADD COLUMN gap_horizon xid8 NULL,
    ADD COLUMN gap_through bigint NULL,
    ADD CONSTRAINT consumer_cursors_horizon_whole
        CHECK ((gap_horizon IS NULL) = (gap_through IS NULL));

-- +goose Down
ALTER TABLE consumer_cursors
    DROP CONSTRAINT consumer_cursors_horizon_whole,
    DROP COLUMN gap_through,
    DROP COLUMN gap_horizon;
