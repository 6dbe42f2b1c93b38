-- Queries of the delivery gauges (signals.md 6.2, D-OB-2): one statement
-- per interval, never per delivery.

-- name: WebhookBacklog :one
-- The pending deliveries and the creation time of the oldest of them (the
-- oldest pending row is its subscription's head: rows of a subscription are
-- created in seq order), and the subscriptions by state. The pending part
-- reads only a partial index of the pending rows and the rows it
-- names, so its cost grows with the backlog, never with finished rows.
-- Without a pending row oldest_created_at is the argument now (age zero).
WITH pending AS (
    SELECT count(*)::bigint AS pending, coalesce(min(d.created_at), sqlc.arg(now)::timestamptz)::timestamptz AS oldest_created_at
    FROM webhook_deliveries d
    WHERE d.status = 'pending'
), subscriptions AS (
    SELECT
        count(*) FILTER (WHERE s.state = 'active')::bigint AS active,
        count(*) FILTER (WHERE s.state = 'paused')::bigint AS paused,
        count(*) FILTER (WHERE s.state = 'disabled')::bigint AS disabled
    FROM webhook_subscriptions s
)
SELECT pending.pending, pending.oldest_created_at, subscriptions.active, subscriptions.paused, subscriptions.disabled
FROM pending, subscriptions;
