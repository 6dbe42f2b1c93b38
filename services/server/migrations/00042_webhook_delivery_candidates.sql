-- +goose Up
-- The candidates of a consumer round (Design note 3 b of M2-26): the live
-- app subscriptions whose event_types contain the event's type. The round
-- asks once per event type with event_types @> ARRAY[type] and exactly this
-- predicate, so the partial GIN index answers it without reading the
-- disabled subscriptions and the agent subscriptions.
CREATE INDEX webhook_subscriptions_candidates_idx ON webhook_subscriptions
    USING gin (event_types)
    WHERE state IN ('active', 'paused') AND app_installation_id IS NOT NULL;

-- +goose Down
DROP INDEX webhook_subscriptions_candidates_idx;
