-- The consumer cursors (migrations 00022 and 00055) and the consumer
-- session's advisory lock. A cursor without a gap horizon reads as horizon
-- 0 and through 0 (the zero domain.Horizon).

-- name: ConsumerCursorEnsure :exec
-- Creates the cursor of a consumer seen for the first time right below the
-- retained log: it handles every event still in the log and reports no loss
-- for events dropped before it existed.
INSERT INTO consumer_cursors (name, last_seq, updated_at)
SELECT @name, dropped_through_seq, @updated_at::timestamptz FROM event_log_watermark
ON CONFLICT (name) DO NOTHING;

-- name: ConsumerCursorGet :one
SELECT last_seq, coalesce(gap_horizon, '0'::xid8)::xid8 AS gap_horizon, coalesce(gap_through, 0)::bigint AS gap_through
FROM consumer_cursors WHERE name = @name;

-- name: ConsumerCursorLock :one
-- The round's transaction id is taken in the same statement, after the
-- caller's read of the log (domain.Settle). The same statement turns
-- synchronous_commit off for the round's transaction alone (D-SY-25): a
-- round lost in a crash runs again from the cursor, and what leaves the
-- database on the strength of its rows waits for a later commit that
-- flushes, which flushes the round's WAL with its own.
SELECT last_seq, coalesce(gap_horizon, '0'::xid8)::xid8 AS gap_horizon, coalesce(gap_through, 0)::bigint AS gap_through,
    pg_current_xact_id()::xid8 AS xact_id
FROM consumer_cursors
WHERE name = @name AND set_config('synchronous_commit', 'off', true) IS NOT NULL
FOR UPDATE;

-- name: ConsumerCursorUpdate :execrows
-- gap_horizon and gap_through are both NULL or both set
-- (consumer_cursors_horizon_whole).
UPDATE consumer_cursors
SET last_seq = @last_seq, gap_horizon = @gap_horizon, gap_through = @gap_through, updated_at = @updated_at
WHERE name = @name;

-- name: ConsumerCursorLockKeyByName :one
-- An identity column is NOT NULL without saying so; the cast tells sqlc.
SELECT lock_key::int AS lock_key FROM consumer_cursors WHERE name = @name;

-- name: ConsumerCursorTryLockSession :one
-- The session-level advisory lock (lock_class, lock_key): held by the
-- process that runs the consumer for the life of its connection; the
-- two-key form never meets River's single-key locks.
SELECT pg_try_advisory_lock(@lock_class::int, @lock_key::int) AS locked;
