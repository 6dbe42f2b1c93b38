-- +goose Up
-- The read of one event by its key (seq, occurred_at), the read of every
-- delivery attempt, under a generic plan (D-SQ-16). Prepared as a plain
-- statement, the partitioned event_log gets a custom plan on every call:
-- PostgreSQL counts every partition in the generic plan's cost, so it
-- never keeps that plan, and planning prunes about 34 partitions each time
-- (sync.event_retention 30d, sync.partition_interval 1d). The function's
-- own plan_cache_mode makes the plan of its body generic, cached per
-- session, with the partition pruned when it runs: BenchmarkEventRead at
-- 34 partitions reads in about 110 µs instead of 155 to 165 µs.
-- +goose StatementBegin
CREATE FUNCTION event_log_event_by_key(p_seq bigint, p_occurred_at timestamptz)
RETURNS SETOF event_log
LANGUAGE sql
STABLE
SET plan_cache_mode = force_generic_plan
AS $$
    SELECT * FROM event_log WHERE seq = p_seq AND occurred_at = p_occurred_at
$$;
-- +goose StatementEnd
GRANT EXECUTE ON FUNCTION event_log_event_by_key(bigint, timestamptz) TO bothy_app;

-- +goose Down
DROP FUNCTION event_log_event_by_key(bigint, timestamptz);
