-- name: WebhookSubscriptionGetByID :one
SELECT * FROM webhook_subscriptions WHERE id = $1;

-- Owner side of outgoing webhooks (app.SubscriptionStore): subscriptions
-- with the app of their installation, and the delivery reads and writes of
-- the owner's operations (list, redeliver, resume). Locks follow the lock
-- order of the module: installation, then subscription, then its deliveries.

-- name: WebhookSubscriptionInsert :exec
INSERT INTO webhook_subscriptions (
    id, app_installation_id, url, event_types, state, signing_key_kid,
    hmac_enabled, hmac_generation, max_per_second, created_by, created_at, updated_at
) VALUES (
    @id, @app_installation_id, @url, @event_types, @state, @signing_key_kid,
    @hmac_enabled, @hmac_generation, sqlc.narg(max_per_second), @created_by, @created_at, @updated_at
);

-- name: WebhookSubscriptionGetWithApp :one
SELECT sqlc.embed(s), i.app_id
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
WHERE s.id = @id;

-- name: WebhookSubscriptionLockWithApp :one
SELECT sqlc.embed(s), i.app_id
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
WHERE s.id = @id
FOR UPDATE OF s;

-- name: WebhookSubscriptionListByApp :many
SELECT sqlc.embed(s), i.app_id
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
WHERE i.app_id = @app_id
ORDER BY s.created_at, s.id;

-- name: WebhookSubscriptionLockByInstallation :many
SELECT sqlc.embed(s), i.app_id
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
WHERE s.app_installation_id = @installation_id
ORDER BY s.id
FOR UPDATE OF s;

-- name: WebhookSubscriptionUpdateOwned :execrows
-- The columns an owner's change or an uninstall writes; last_delivered_seq
-- and signing_key_kid belong to the delivery job.
UPDATE webhook_subscriptions
SET url = @url,
    event_types = @event_types,
    state = @state,
    hmac_generation = @hmac_generation,
    hmac_rotated_at = @hmac_rotated_at,
    consecutive_failures = @consecutive_failures,
    disabled_at = @disabled_at,
    max_per_second = sqlc.narg(max_per_second),
    updated_at = @updated_at
WHERE id = @id;

-- name: WebhookSubscriptionDelete :execrows
DELETE FROM webhook_subscriptions WHERE id = @id;

-- name: WebhookDeliveryMakeHeadDue :execrows
-- The head is the subscription's pending delivery with the lowest event_seq
-- (index webhook_deliveries_head_idx).
UPDATE webhook_deliveries
SET next_attempt_at = @now::timestamptz, updated_at = @now::timestamptz
WHERE id = (
    SELECT h.id FROM webhook_deliveries h
    WHERE h.subscription_id = @subscription_id AND h.status = 'pending'
    ORDER BY h.event_seq
    LIMIT 1
);

-- name: WebhookDeliveryGetByID :one
SELECT * FROM webhook_deliveries WHERE id = @id;

-- name: WebhookDeliveryLockByID :one
SELECT * FROM webhook_deliveries WHERE id = @id FOR UPDATE;

-- name: WebhookDeliveryUpdateForRedelivery :execrows
-- attempt is kept: a redelivery is a new delivery of the same event.
UPDATE webhook_deliveries
SET status = @status,
    next_attempt_at = @next_attempt_at,
    last_error = @last_error,
    response_code = @response_code,
    delivered_at = @delivered_at,
    created_at = @created_at,
    updated_at = @updated_at,
    finished_at = CASE WHEN @status::text = 'pending' THEN NULL ELSE finished_at END
WHERE id = @id;

-- name: WebhookDeliveryPage :many
-- Newest first by (event_seq, id) descending (D-M2-26-20); an empty status
-- means every status; has_after false means the first page.
SELECT * FROM webhook_deliveries
WHERE subscription_id = @subscription_id
  AND (@status::text = '' OR status = @status::text)
  AND (NOT @has_after::boolean OR (event_seq, id) < (@after_seq::bigint, @after_id::uuid))
ORDER BY event_seq DESC, id DESC
LIMIT @max_rows;
