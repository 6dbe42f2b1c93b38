-- +goose Up
-- Outgoing webhook subscriptions (docs/spec/03-data-model.md 4.11,
-- docs/api/webhooks.md). A subscription belongs to exactly one app
-- installation or one agent; agent subscriptions are not delivered yet.
-- The v1 (HMAC) secret is never stored: it is derived from the master key,
-- the subscription ID and hmac_generation (D-M2-26-10).
CREATE TABLE webhook_subscriptions (
    id                   uuid PRIMARY KEY,
    app_installation_id  uuid NULL REFERENCES app_installations (id) ON DELETE CASCADE,
    agent_id             uuid NULL REFERENCES agents (principal_id) ON DELETE CASCADE,
    url                  text NOT NULL CHECK (url LIKE 'https://%'),
    event_types          text[] NOT NULL
                         CHECK (cardinality(event_types) >= 1 AND array_position(event_types, NULL) IS NULL),
    state                text NOT NULL CHECK (state IN ('active', 'paused', 'disabled')),
    signing_key_kid      text NOT NULL,
    hmac_enabled         boolean NOT NULL DEFAULT false,
    hmac_generation      integer NOT NULL DEFAULT 0 CHECK (hmac_generation >= 0),
    hmac_rotated_at      timestamptz NULL,
    consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    last_delivered_seq   bigint NOT NULL DEFAULT 0 CHECK (last_delivered_seq >= 0),
    disabled_at          timestamptz NULL,
    created_by           uuid NOT NULL REFERENCES principals (id),
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    CONSTRAINT webhook_subscriptions_one_target
        CHECK ((app_installation_id IS NULL) <> (agent_id IS NULL)),
    CONSTRAINT webhook_subscriptions_hmac_generation
        CHECK (hmac_enabled OR hmac_generation = 0),
    CONSTRAINT webhook_subscriptions_disabled_at_by_state
        CHECK ((state = 'disabled') = (disabled_at IS NOT NULL))
);
CREATE INDEX webhook_subscriptions_state_idx ON webhook_subscriptions (state);
CREATE INDEX webhook_subscriptions_agent_idx ON webhook_subscriptions (agent_id) WHERE agent_id IS NOT NULL;
CREATE INDEX webhook_subscriptions_installation_idx ON webhook_subscriptions (app_installation_id) WHERE app_installation_id IS NOT NULL;

GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_subscriptions TO bothy_app;

COMMENT ON TABLE webhook_subscriptions IS 'Outgoing webhook subscriptions of app installations and agents. retention: config (kept while the subscription exists)';

-- +goose Down
DROP TABLE webhook_subscriptions;
