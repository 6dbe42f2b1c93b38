-- +goose Up
-- The lease of an attempt in flight belongs to the subscription, not to the
-- delivery row (docs/DECISIONS.md D-M2-26-37, ADR 0069): lease_delivery_id
-- names the delivery whose attempt is in flight and lease_until when its
-- lease ends. A delivery's next_attempt_at is only its due time (backoff,
-- Retry-After, an owner's resume or redelivery), so making a head due can
-- never cancel a lease, and a redelivered earlier row waits like any other
-- head: at most one attempt per subscription is in flight.
ALTER TABLE webhook_subscriptions
    ADD COLUMN lease_delivery_id uuid NULL,
    ADD COLUMN lease_until timestamptz NULL,
    ADD CONSTRAINT webhook_subscriptions_lease_complete
        CHECK ((lease_delivery_id IS NULL) = (lease_until IS NULL));

-- A head that keeps failing on our side after the delivery job's runs are
-- spent names internal_error (D-M2-26-42).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_last_error_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_last_error_check CHECK (last_error IN (
    'timeout', 'connection_failed', 'tls_failed', 'address_blocked',
    'host_not_allowed', 'http_status', 'throttled', 'gone',
    'not_authorized', 'not_subscribed', 'event_expired', 'internal_error'));

-- +goose Down
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_last_error_check;
UPDATE webhook_deliveries SET last_error = NULL WHERE last_error = 'internal_error';
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_last_error_check CHECK (last_error IN (
    'timeout', 'connection_failed', 'tls_failed', 'address_blocked',
    'host_not_allowed', 'http_status', 'throttled', 'gone',
    'not_authorized', 'not_subscribed', 'event_expired'));
ALTER TABLE webhook_subscriptions
    DROP CONSTRAINT webhook_subscriptions_lease_complete,
    DROP COLUMN lease_until,
    DROP COLUMN lease_delivery_id;
