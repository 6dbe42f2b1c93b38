-- +goose Up
-- Partition maintenance under a lock (issue 13 item 4). Roles started
-- together on one database all run event_log_maintain_partitions at start;
-- its check-then-create let two callers create the same partition, and the
-- second failed with 42P07 (relation already exists). The body of 00021
-- stays as it is under a new name that bothy_app may no longer execute, and
-- the function bothy_app calls takes a transaction-scoped advisory lock
-- first, so concurrent runs wait for each other; each statement of the body
-- then reads the catalogue as the winner left it and creates nothing twice.
-- The lock is released when the caller's transaction ends, so a caller in
-- autocommit holds it for one maintenance run only.
ALTER FUNCTION event_log_maintain_partitions(timestamptz, interval, interval, interval)
    RENAME TO event_log_maintain_partitions_unlocked;
REVOKE ALL ON FUNCTION event_log_maintain_partitions_unlocked(timestamptz, interval, interval, interval) FROM bothy_app;

-- +goose StatementBegin
CREATE FUNCTION event_log_maintain_partitions(
    p_now timestamptz,
    p_interval interval,
    p_ahead interval,
    p_retention interval,
    OUT created integer,
    OUT dropped integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = public, pg_temp
SET TimeZone = 'UTC'
SET DateStyle = 'ISO, YMD'
AS $$
BEGIN
    -- One key for the whole instance: hashtext of a fixed name, so every
    -- process of every version agrees on it.
    PERFORM pg_advisory_xact_lock(hashtext('bothy.event_log_maintain_partitions'));
    SELECT u.created, u.dropped INTO created, dropped
    FROM event_log_maintain_partitions_unlocked(p_now, p_interval, p_ahead, p_retention) u;
END
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION event_log_maintain_partitions(timestamptz, interval, interval, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION event_log_maintain_partitions(timestamptz, interval, interval, interval) TO bothy_app;

-- +goose Down
DROP FUNCTION event_log_maintain_partitions(timestamptz, interval, interval, interval);
ALTER FUNCTION event_log_maintain_partitions_unlocked(timestamptz, interval, interval, interval)
    RENAME TO event_log_maintain_partitions;
GRANT EXECUTE ON FUNCTION event_log_maintain_partitions(timestamptz, interval, interval, interval) TO bothy_app;
