-- +goose Up
-- One row per event and subscription (docs/spec/03-data-model.md 4.11). Rows
-- are created by the consumer round (status pending) and finished by the
-- delivery job; the event itself stays in event_log and is read at attempt
-- time, never copied. A response body is never stored.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY,
    subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_seq       bigint NOT NULL,
    event_id        uuid NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'dead')),
    attempt         integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    next_attempt_at timestamptz NULL,
    last_error      text NULL CHECK (last_error IN (
                        'timeout', 'connection_failed', 'tls_failed', 'address_blocked',
                        'host_not_allowed', 'http_status', 'throttled', 'gone',
                        'not_authorized', 'not_subscribed', 'event_expired')),
    response_code   integer NULL CHECK (response_code BETWEEN 100 AND 599),
    delivered_at    timestamptz NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    CONSTRAINT webhook_deliveries_subscription_event_key UNIQUE (subscription_id, event_seq),
    CONSTRAINT webhook_deliveries_next_attempt_by_status
        CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
    CONSTRAINT webhook_deliveries_delivered_at_by_status
        CHECK ((status = 'succeeded') = (delivered_at IS NOT NULL))
);
-- Due deliveries across subscriptions (lease wake-ups, retention checks).
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- The head of a subscription: its pending row with the lowest event_seq.
CREATE INDEX webhook_deliveries_head_idx ON webhook_deliveries (subscription_id, event_seq) WHERE status = 'pending';

GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_deliveries TO bothy_app;

COMMENT ON TABLE webhook_deliveries IS 'Webhook deliveries per event and subscription. retention: transient (retention.webhook_deliveries; only succeeded, failed and dead rows may be deleted, never pending ones)';

-- +goose Down
DROP TABLE webhook_deliveries;
