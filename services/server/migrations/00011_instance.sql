-- +goose Up
-- The instance row (M1-15): exactly one row, created at the first start by
-- instance/app.Service.Ensure. sync_epoch changes only when the event log
-- restarts (a restore); receivers and clients compare it to notice that seq
-- values were reset (docs/spec/04-sync-protocol.md 7.5).
CREATE TABLE instance (
    id         uuid PRIMARY KEY,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    sync_epoch uuid NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT instance_updated_after_created CHECK (updated_at >= created_at)
);

-- At most one row: every row has the same key in this index, so a second
-- insert conflicts (Ensure inserts with ON CONFLICT ((true)) DO NOTHING).
CREATE UNIQUE INDEX instance_singleton ON instance ((true));

GRANT SELECT, INSERT, UPDATE, DELETE ON instance TO bothy_app;

COMMENT ON TABLE instance IS 'The instance record with its sync epoch (instance module). retention: config';

-- +goose Down
DROP TABLE instance;
