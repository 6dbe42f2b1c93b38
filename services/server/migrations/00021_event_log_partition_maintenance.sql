-- +goose Up
-- Partition maintenance of event_log (M1-16). bothy_app may not run DDL
-- (ADR 0007), so creating and dropping partitions goes through these
-- SECURITY DEFINER functions, owned by the migration owner and executable by
-- bothy_app only. The Go side is sync/adapters/postgres.Maintainer, called
-- periodically and at start with sync.partition_interval,
-- sync.partition_ahead and sync.event_retention.

-- event_log_partitions lists the partitions of event_log with their bounds,
-- parsed from the catalogue (the single source of truth).
-- +goose StatementBegin
CREATE FUNCTION event_log_partitions()
RETURNS TABLE (partition regclass, lower_bound timestamptz, upper_bound timestamptz)
LANGUAGE sql STABLE
SET search_path = public, pg_temp
SET TimeZone = 'UTC'
SET DateStyle = 'ISO, YMD'
AS $$
    SELECT c.oid::regclass, b[1]::timestamptz, b[2]::timestamptz
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid),
        'FROM \(''([^'']+)''\) TO \(''([^'']+)''\)') AS b
    WHERE i.inhparent = 'public.event_log'::regclass
    ORDER BY 2
$$;
-- +goose StatementEnd

-- event_log_maintain_partitions makes sure partitions cover
-- [p_now, p_now + p_ahead] and drops every partition whose upper bound is at
-- or before p_now - p_retention. New partitions are p_interval long and
-- aligned to multiples of p_interval since the Unix epoch (UTC); a range
-- already covered (for example after p_interval changed) is skipped and only
-- the uncovered part is created, so partitions never overlap.
--
-- Dropping keeps the retention watermark exact: the highest seq of the
-- dropped partitions raises event_log_watermark.dropped_through_seq, and
-- events with a seq at or below it that sit in a newer partition (appends
-- whose occurred_at order differs from their commit order near a partition
-- bound) are deleted too. So the retained log is always exactly the events
-- above the watermark, and MinRetainedSeq never hides a loss.
--
-- Arguments are validated: none may be null, p_now must be finite,
-- p_interval a whole number of seconds of at least one second, p_ahead not
-- negative, p_retention positive, and one call creates at most 1000
-- partitions (a guard against a runaway caller, not a product limit).
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
DECLARE
    step      numeric;
    slot_lo   timestamptz;
    slot_hi   timestamptz;
    horizon   timestamptz;
    cur       timestamptz;
    part_hi   timestamptz;
    cover_hi  timestamptz;
    cutoff    timestamptz;
    mark      bigint;
    part_max  bigint;
    r         record;
BEGIN
    created := 0;
    dropped := 0;
    IF p_now IS NULL OR p_interval IS NULL OR p_ahead IS NULL OR p_retention IS NULL THEN
        RAISE EXCEPTION 'event_log_maintain_partitions: arguments must not be null'
            USING ERRCODE = '22004';
    END IF;
    IF NOT isfinite(p_now) THEN
        RAISE EXCEPTION 'event_log_maintain_partitions: p_now must be finite'
            USING ERRCODE = '22023';
    END IF;
    step := extract(epoch FROM p_interval);
    IF step < 1 OR step <> trunc(step) THEN
        RAISE EXCEPTION 'event_log_maintain_partitions: p_interval must be a whole number of seconds, at least one'
            USING ERRCODE = '22023';
    END IF;
    IF p_ahead < interval '0' THEN
        RAISE EXCEPTION 'event_log_maintain_partitions: p_ahead must not be negative'
            USING ERRCODE = '22023';
    END IF;
    IF p_retention <= interval '0' THEN
        RAISE EXCEPTION 'event_log_maintain_partitions: p_retention must be positive'
            USING ERRCODE = '22023';
    END IF;
    IF extract(epoch FROM p_ahead) / step > 999 THEN
        RAISE EXCEPTION 'event_log_maintain_partitions: p_ahead spans too many partitions'
            USING ERRCODE = '22023';
    END IF;

    -- Create.
    slot_lo := to_timestamp((floor(extract(epoch FROM p_now) / step) * step)::double precision);
    horizon := p_now + p_ahead;
    WHILE slot_lo <= horizon LOOP
        slot_hi := slot_lo + make_interval(secs => step::double precision);
        cur := slot_lo;
        WHILE cur < slot_hi LOOP
            SELECT p.upper_bound INTO cover_hi
            FROM event_log_partitions() p
            WHERE p.lower_bound <= cur AND p.upper_bound > cur;
            IF FOUND THEN
                cur := cover_hi;
                CONTINUE;
            END IF;
            SELECT min(p.lower_bound) INTO part_hi
            FROM event_log_partitions() p
            WHERE p.lower_bound > cur AND p.lower_bound < slot_hi;
            part_hi := coalesce(part_hi, slot_hi);
            EXECUTE format('CREATE TABLE %I PARTITION OF event_log FOR VALUES FROM (%L) TO (%L)',
                'event_log_p' || to_char(cur, 'YYYYMMDD"t"HH24MISS'), cur, part_hi);
            created := created + 1;
            cur := part_hi;
        END LOOP;
        slot_lo := slot_hi;
    END LOOP;

    -- Drop.
    cutoff := p_now - p_retention;
    SELECT w.dropped_through_seq INTO mark FROM event_log_watermark w FOR UPDATE;
    FOR r IN SELECT p.partition FROM event_log_partitions() p WHERE p.upper_bound <= cutoff LOOP
        EXECUTE format('SELECT max(seq) FROM %s', r.partition) INTO part_max;
        IF part_max IS NOT NULL AND part_max > mark THEN
            mark := part_max;
        END IF;
        EXECUTE format('DROP TABLE %s', r.partition);
        dropped := dropped + 1;
    END LOOP;
    IF dropped > 0 THEN
        DELETE FROM event_log WHERE seq <= mark;
        UPDATE event_log_watermark SET dropped_through_seq = mark, updated_at = p_now;
    END IF;
END
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION event_log_partitions() FROM PUBLIC;
REVOKE ALL ON FUNCTION event_log_maintain_partitions(timestamptz, interval, interval, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION event_log_partitions() TO bothy_app;
GRANT EXECUTE ON FUNCTION event_log_maintain_partitions(timestamptz, interval, interval, interval) TO bothy_app;

-- +goose Down
DROP FUNCTION event_log_maintain_partitions(timestamptz, interval, interval, interval);
DROP FUNCTION event_log_partitions();
