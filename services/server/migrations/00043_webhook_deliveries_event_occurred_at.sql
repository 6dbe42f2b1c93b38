-- +goose Up
-- A delivery carries the whole key of its event in event_log, (event_seq,
-- event_occurred_at), so that every attempt, the redelivery check and the
-- deliveries list read the event from its one partition of the log instead
-- of probing the index of every partition by seq (ADR 0068).
ALTER TABLE webhook_deliveries ADD COLUMN event_occurred_at timestamptz;

-- Rows made before this migration take the key of their event while it is
-- retained. A row whose event already left the log keeps created_at, which
-- is never the key of a retained event (a seq has one event), so the row
-- still reads its event as gone.
UPDATE webhook_deliveries d
SET event_occurred_at = e.occurred_at
FROM event_log e
WHERE e.seq = d.event_seq;
UPDATE webhook_deliveries SET event_occurred_at = created_at WHERE event_occurred_at IS NULL;

ALTER TABLE webhook_deliveries ALTER COLUMN event_occurred_at SET NOT NULL;

-- +goose Down
ALTER TABLE webhook_deliveries DROP COLUMN event_occurred_at;
