-- +goose Up
-- The holders of grants on a place: the round of the consumer webhooks
-- routes an event only to the apps that can see it (docs/DECISIONS.md
-- D-M2-26-35), and finds them through the event's space and channel
-- (authz.DeliveryRouter.Reach) instead of reading every subscription of
-- the event's type.
CREATE INDEX grants_place_idx ON grants (space_id, channel_id);

-- +goose Down
DROP INDEX grants_place_idx;
