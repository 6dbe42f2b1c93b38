-- +goose Up
-- The read of the events of a delivery batch by their keys (ADR 0088)
-- under generic plans, for the reason of 00057 (D-SQ-16): prepared as a
-- plain statement, the partitioned event_log got a custom plan on every
-- call (0.15 to 0.19 ms of planning per call in make bench-e2e, fleet and
-- rate). Each key is read by a statement of its own with plain parameters,
-- as event_log_event_by_key does, so its generic plan, cached per session
-- under the function's plan_cache_mode, prunes to the partition of the
-- key's occurred_at when it runs. A single statement over all keys under a
-- generic plan pruned nothing: with occurred_at = ANY(keys) it probed every
-- partition (9.5 buffers a read against 3.4), and joined LATERAL to the
-- keys it scanned the log (614 buffers).
-- +goose StatementBegin
CREATE FUNCTION event_log_events_by_keys(p_seqs bigint[], p_occurred_ats timestamptz[])
RETURNS SETOF event_log
LANGUAGE plpgsql
STABLE
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    k_seq bigint;
    k_occurred_at timestamptz;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_seqs), 0) LOOP
        k_seq := p_seqs[i];
        k_occurred_at := p_occurred_ats[i];
        RETURN QUERY SELECT * FROM event_log WHERE seq = k_seq AND occurred_at = k_occurred_at;
    END LOOP;
END
$$;
-- +goose StatementEnd
GRANT EXECUTE ON FUNCTION event_log_events_by_keys(bigint[], timestamptz[]) TO bothy_app;

-- +goose Down
DROP FUNCTION event_log_events_by_keys(bigint[], timestamptz[]);
