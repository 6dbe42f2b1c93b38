-- +goose Up
-- Channels in a space (M1-53, internal/chat). (space_id, id) is unique so
-- that threads, messages and grants can reference a channel together with
-- its space: a row can never name a channel of another space.
CREATE TABLE channels (
    id         uuid PRIMARY KEY,
    space_id   uuid NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (name <> ''),
    created_by uuid NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT channels_space_id_id_key UNIQUE (space_id, id),
    CONSTRAINT channels_space_id_name_key UNIQUE (space_id, name)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON channels TO bothy_app;
COMMENT ON TABLE channels IS 'Channels of a space. retention: config (kept until deleted with their space)';

-- +goose Down
DROP TABLE channels;
