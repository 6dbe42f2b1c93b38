-- Bulk recovery of outgoing webhooks (recoverWebhookDeliveries, ADR 0079,
-- D-M2-26-50 to D-M2-26-53): the finished deliveries of one subscription
-- that become pending again. The caller holds the subscription's row lock
-- (FOR UPDATE, lock order: the subscription row, then its delivery rows).

-- name: WebhookDeliveryRecoverWindow :one
-- Up to @max_rows failed or dead deliveries of the subscription whose event
-- is still in the log (event_seq at or above @min_seq, the retention
-- watermark plus one) and whose created_at lies in [@since, @until),
-- lowest event_seq first, become pending again exactly as a redelivery
-- leaves a row: due at @now, last_error, response_code, delivered_at and
-- finished_at cleared, attempt kept, created_at = @now (a new retry
-- window). The scan walks the unique index (subscription_id, event_seq)
-- from @min_seq and stops after @max_rows + 1 matches; the one read ahead
-- only tells whether more match. The engine's head rule (the lowest
-- pending event_seq goes first) puts the recovered rows into the
-- subscription's order; nothing else is needed for it.
WITH bound AS (
    SELECT @max_rows::int AS max_rows
), candidates AS (
    SELECT d.id, d.event_seq FROM webhook_deliveries d
    WHERE d.subscription_id = @subscription_id
      AND d.event_seq >= @min_seq::bigint
      AND d.status IN ('failed', 'dead')
      AND d.created_at >= @since::timestamptz
      AND d.created_at < @until::timestamptz
    ORDER BY d.event_seq
    LIMIT (SELECT b.max_rows + 1 FROM bound b)
    FOR UPDATE
), picked AS (
    SELECT c.id FROM candidates c ORDER BY c.event_seq LIMIT (SELECT b.max_rows FROM bound b)
), recovered AS (
    UPDATE webhook_deliveries d
    SET status = 'pending',
        next_attempt_at = @now::timestamptz,
        last_error = NULL,
        response_code = NULL,
        delivered_at = NULL,
        finished_at = NULL,
        created_at = @now::timestamptz,
        updated_at = @now::timestamptz
    FROM picked
    WHERE d.id = picked.id
    RETURNING d.event_seq
)
SELECT (SELECT count(*) FROM recovered)::int AS recovered,
       coalesce((SELECT min(r.event_seq) FROM recovered r), 0)::bigint AS first_seq,
       coalesce((SELECT max(r.event_seq) FROM recovered r), 0)::bigint AS last_seq,
       ((SELECT count(*) FROM candidates) > (SELECT b.max_rows FROM bound b))::boolean AS has_more;
