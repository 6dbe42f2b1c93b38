-- +goose Up
-- The durable event log (M1-16, docs/spec/04-sync-protocol.md 2,
-- docs/adr/0051-worker-consumers-of-the-event-log-with-a-cursor.md).
--
-- seq is allocated by the appender under a transaction-scoped advisory lock,
-- so seq order equals commit order and a consumer reading "seq > cursor"
-- never skips an event that commits later with a lower seq. The table is
-- partitioned by occurred_at; partitions are created ahead and dropped after
-- sync.event_retention by event_log_maintain_partitions (00021). There is no
-- default partition: an event whose time has no partition is an error, never
-- a silently kept or lost row.
CREATE SEQUENCE event_log_seq AS bigint START WITH 1 NO CYCLE;

CREATE TABLE event_log (
    seq                   bigint NOT NULL,
    id                    uuid NOT NULL,
    type                  text NOT NULL,
    resource_kind         text NOT NULL,
    resource_id           uuid NOT NULL,
    space_id              uuid NULL,
    channel_id            uuid NULL,
    thread_id             uuid NULL,
    audience_principal_id uuid NULL,
    receive_action        text NOT NULL,
    actor_id              uuid NULL,
    payload               jsonb NOT NULL CHECK (jsonb_typeof(payload) = 'object'),
    truncated             boolean NOT NULL DEFAULT false,
    occurred_at           timestamptz NOT NULL,
    -- The primary key must contain the partition key. With seq first it is
    -- also the index by seq in every partition that rounds (seq > cursor
    -- ORDER BY seq) and EventBySeq read.
    CONSTRAINT event_log_pkey PRIMARY KEY (seq, occurred_at),
    CONSTRAINT event_log_seq_positive CHECK (seq > 0),
    -- Personal events (receive action self) and only they name an audience.
    CONSTRAINT event_log_audience_iff_self
        CHECK ((receive_action = 'self') = (audience_principal_id IS NOT NULL))
) PARTITION BY RANGE (occurred_at);

ALTER SEQUENCE event_log_seq OWNED BY event_log.seq;

-- The retention watermark: every event with seq <= dropped_through_seq was
-- dropped by retention, and every committed event above it is still in the
-- log. MinRetainedSeq is dropped_through_seq + 1, so a gap left by a
-- rolled-back append is never mistaken for a loss.
CREATE TABLE event_log_watermark (
    singleton           boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    dropped_through_seq bigint NOT NULL DEFAULT 0 CHECK (dropped_through_seq >= 0),
    updated_at          timestamptz NULL
);
INSERT INTO event_log_watermark (singleton, dropped_through_seq) VALUES (true, 0);

GRANT SELECT, INSERT, UPDATE, DELETE ON event_log TO bothy_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON event_log_watermark TO bothy_app;
GRANT USAGE, SELECT ON SEQUENCE event_log_seq TO bothy_app;

COMMENT ON TABLE event_log IS 'retention: transient';
COMMENT ON TABLE event_log_watermark IS 'retention: config';

-- +goose Down
DROP TABLE event_log_watermark;
DROP TABLE event_log;
