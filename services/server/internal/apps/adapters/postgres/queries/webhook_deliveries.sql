-- Delivery side of outgoing webhooks (app.DeliveryStore): the rows a
-- consumer round creates, the claim, lease and record of an attempt, and
-- the system transitions of a subscription. The subscription row is locked
-- with FOR NO KEY UPDATE: delivery jobs and owner changes (FOR UPDATE)
-- serialize on it, while a round inserting delivery rows (FOR KEY SHARE
-- through the foreign key) does not wait. Lock order: the subscription row,
-- then its delivery rows.

-- name: WebhookSubscriptionDeliveryCandidates :many
-- Index webhook_subscriptions_candidates_idx (partial GIN on event_types
-- with exactly the state and target predicate below).
SELECT s.id, s.state, i.id AS installation_id, i.app_id, i.state AS installation_state, a.principal_id
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
JOIN apps a ON a.id = i.app_id
WHERE s.state IN ('active', 'paused')
  AND s.app_installation_id IS NOT NULL
  AND s.event_types @> ARRAY[@event_type::text]
  AND i.state IN ('active', 'suspended')
  AND i.event_subscriptions @> ARRAY[@event_type::text]
ORDER BY s.id;

-- name: WebhookDeliveryInsertForEvent :many
INSERT INTO webhook_deliveries (
    id, subscription_id, event_seq, event_id, event_occurred_at, status, attempt, next_attempt_at, created_at, updated_at
)
SELECT u.id, u.subscription_id, @event_seq::bigint, @event_id::uuid, @event_occurred_at::timestamptz, 'pending', 0,
       @now::timestamptz, @now, @now
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@subscription_ids::uuid[]) AS subscription_id) AS u
ON CONFLICT (subscription_id, event_seq) DO NOTHING
RETURNING subscription_id;

-- name: WebhookDeliveryCountPending :many
-- A bounded count per subscription (index webhook_deliveries_head_idx):
-- it stops at max_count, so a large backlog costs at most max_count index
-- entries.
SELECT u.subscription_id::uuid AS subscription_id,
       (SELECT count(*) FROM (
            SELECT 1 FROM webhook_deliveries d
            WHERE d.subscription_id = u.subscription_id AND d.status = 'pending'
            LIMIT @max_count::int
       ) AS bounded)::int AS pending
FROM unnest(@subscription_ids::uuid[]) AS u (subscription_id);

-- name: WebhookSubscriptionLockDeliveryTarget :one
SELECT s.id, s.state, s.url, s.event_types, s.hmac_enabled, s.hmac_generation, s.hmac_rotated_at,
       s.consecutive_failures, s.disabled_at,
       i.id AS installation_id, i.app_id, i.state AS installation_state, i.granted_scopes,
       i.event_subscriptions, a.principal_id
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
JOIN apps a ON a.id = i.app_id
WHERE s.id = @id
FOR NO KEY UPDATE OF s;

-- name: WebhookSubscriptionLockLive :many
SELECT s.id, s.state, i.app_id
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
WHERE s.state IN ('active', 'paused')
  AND s.app_installation_id IS NOT NULL
  AND i.state IN ('active', 'suspended')
ORDER BY s.id
FOR NO KEY UPDATE OF s;

-- name: WebhookSubscriptionSetSystemState :execrows
UPDATE webhook_subscriptions
SET state = @state, disabled_at = @disabled_at, updated_at = @now
WHERE id = @id;

-- name: WebhookDeliveryClaimHead :one
-- The head is the subscription's pending row with the lowest event_seq
-- (index webhook_deliveries_head_idx); it is leased only when it is due.
UPDATE webhook_deliveries d
SET attempt = d.attempt + 1, next_attempt_at = @lease_until::timestamptz, updated_at = @now
FROM (
    SELECT h.id FROM webhook_deliveries h
    WHERE h.subscription_id = @subscription_id AND h.status = 'pending'
    ORDER BY h.event_seq
    LIMIT 1
) AS head
WHERE d.id = head.id AND d.next_attempt_at <= @now
RETURNING d.id, d.event_seq, d.event_id, d.event_occurred_at, d.attempt, d.created_at;

-- name: WebhookDeliveryFinishUnsent :execrows
UPDATE webhook_deliveries
SET status = 'dead', attempt = @attempt, next_attempt_at = NULL, last_error = @last_error, updated_at = @now
WHERE id = @id AND status = 'pending';

-- name: WebhookDeliveryExpirePending :one
WITH expired AS (
    UPDATE webhook_deliveries
    SET status = 'dead', next_attempt_at = NULL, last_error = 'event_expired', updated_at = @now
    WHERE subscription_id = @subscription_id AND status = 'pending' AND event_seq < @below_seq
    RETURNING event_seq
)
SELECT count(*)::int AS expired,
       coalesce(min(event_seq), 0)::bigint AS first_seq,
       coalesce(max(event_seq), 0)::bigint AS last_seq
FROM expired;

-- name: WebhookDeliveryRecordAttempt :one
-- One statement records an attempt: the delivery, only while it is still
-- pending with the claimed attempt, and, when change_subscription, its
-- subscription. recorded is 0 when the result is discarded.
WITH delivery AS (
    UPDATE webhook_deliveries d
    SET status = @status,
        next_attempt_at = @next_attempt_at,
        last_error = @last_error,
        response_code = @response_code,
        delivered_at = @delivered_at,
        updated_at = @now
    WHERE d.id = @id AND d.status = 'pending' AND d.attempt = @attempt
    RETURNING d.subscription_id, d.event_seq
), subscription AS (
    UPDATE webhook_subscriptions s
    SET state = @state,
        disabled_at = @disabled_at,
        consecutive_failures = @consecutive_failures,
        last_delivered_seq = CASE WHEN @delivered::boolean
                                  THEN GREATEST(s.last_delivered_seq, delivery.event_seq)
                                  ELSE s.last_delivered_seq END,
        signing_key_kid = coalesce(sqlc.narg(signing_key_kid)::text, s.signing_key_kid),
        updated_at = @now
    FROM delivery
    WHERE s.id = delivery.subscription_id AND @change_subscription::boolean
    RETURNING s.id
)
SELECT count(*)::int AS recorded FROM delivery;

-- name: WebhookDeliveryDeleteFinished :execrows
-- One retention batch: up to @batch finished deliveries (never a pending
-- one) that finished before @before, oldest first. Rows another
-- transaction holds (a redelivery) are skipped, so a batch never waits.
DELETE FROM webhook_deliveries
WHERE id IN (
    SELECT d.id FROM webhook_deliveries d
    WHERE d.status <> 'pending' AND d.updated_at < @before
    ORDER BY d.updated_at
    LIMIT @batch
    FOR UPDATE SKIP LOCKED);
