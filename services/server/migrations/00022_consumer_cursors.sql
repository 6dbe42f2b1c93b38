-- +goose Up
-- One cursor per worker consumer of the event log (M2-01,
-- docs/adr/0051-worker-consumers-of-the-event-log-with-a-cursor.md):
-- last_seq is the seq of the last event the consumer handled. A round locks
-- the row, handles the events after it and moves it in one transaction.
-- lock_key is the consumer's session advisory lock key, unique by
-- construction, so two consumers never share a lock the way two hashed names
-- could.
CREATE TABLE consumer_cursors (
    name       text PRIMARY KEY CHECK (name <> ''),
    lock_key   integer GENERATED ALWAYS AS IDENTITY UNIQUE,
    last_seq   bigint NOT NULL CHECK (last_seq >= 0),
    updated_at timestamptz NOT NULL
);

GRANT SELECT, INSERT, UPDATE, DELETE ON consumer_cursors TO bothy_app;

COMMENT ON TABLE consumer_cursors IS 'retention: config';

-- +goose Down
DROP TABLE consumer_cursors;
