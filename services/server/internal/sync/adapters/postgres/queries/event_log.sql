-- The event log (migrations 00020, 00021 and 00050): the append, the reads
-- of sync.LogReader and of consumer rounds, and partition maintenance.

-- name: EventLogAppend :many
-- The events of one unit of work's append (ADR 0099): one statement
-- whatever their number, element i of each array being the column of
-- event i (set-returning functions of one select list run in step). The seq is taken only once the transaction has its id (ADR
-- 0070, domain.Settle), which pg_current_xact_id() assigns when the unit
-- of work has not written yet. CASE evaluates its condition before its
-- result, the way PostgreSQL's rules of expression evaluation give to
-- force an order on two volatile calls of one statement (D-SQ-21). The
-- seqs follow the order of the arrays: PostgreSQL evaluates the volatile
-- expressions of a select list after its ORDER BY sorted the rows (the
-- SELECT reference, "The SELECT list"), so nextval runs in ord order.
-- The ordinals are a parameter (1 to n) rather than generate_series(1,
-- cardinality(...)): a generic plan estimates generate_series of a
-- parameter at 1,000 rows and an unnest of one at 10, so only with unnest
-- does PostgreSQL find the generic plan no dearer than its custom plans
-- and stop planning the append anew at every call (D-SQ-26).
INSERT INTO event_log (seq, id, type, resource_kind, resource_id, space_id, channel_id, thread_id,
    audience_principal_id, receive_action, actor_id, payload, truncated, occurred_at)
SELECT CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('event_log_seq') END,
    e.id, e.type, e.resource_kind, e.resource_id, e.space_id, e.channel_id, e.thread_id,
    e.audience_principal_id, e.receive_action, e.actor_id, e.payload, e.truncated, e.occurred_at
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@types::text[]) AS type,
        unnest(@resource_kinds::text[]) AS resource_kind, unnest(@resource_ids::uuid[]) AS resource_id,
        unnest(@space_ids::uuid[]) AS space_id, unnest(@channel_ids::uuid[]) AS channel_id,
        unnest(@thread_ids::uuid[]) AS thread_id, unnest(@audience_principal_ids::uuid[]) AS audience_principal_id,
        unnest(@receive_actions::text[]) AS receive_action, unnest(@actor_ids::uuid[]) AS actor_id,
        unnest(@payloads::jsonb[]) AS payload, unnest(@truncateds::boolean[]) AS truncated,
        unnest(@occurred_ats::timestamptz[]) AS occurred_at,
        unnest(@ords::int[]) AS ord) AS e
ORDER BY e.ord
RETURNING id, seq;

-- name: EventGetByKey :one
-- The key names the partition (occurred_at), so the read touches one;
-- through event_log_event_by_key (00057) its plan is generic and cached,
-- not made anew for every call (D-SQ-16).
SELECT * FROM event_log_event_by_key(@seq, @occurred_at);

-- name: EventTypeListByKeys :many
-- Only the partitions of the keys' occurred_at; the caller leaves out a row
-- that pairs the seq of one key with the time of another.
SELECT seq, occurred_at, type FROM event_log
WHERE occurred_at = ANY(@occurred_ats::timestamptz[]) AND seq = ANY(@seqs::bigint[]);

-- name: EventListByKeys :many
-- The events of a batch of deliveries (ADR 0088): through
-- event_log_events_by_keys (00060) each key is read by its seq with its
-- own occurred_at, under a generic plan cached per session and pruned to
-- the key's partition (D-SQ-18).
SELECT * FROM event_log_events_by_keys(@seqs::bigint[], @occurred_ats::timestamptz[]);

-- name: EventListAfter :many
-- A consumer round's read: the primary key (seq, occurred_at) is the index
-- by seq in every partition.
SELECT * FROM event_log WHERE seq > @after ORDER BY seq LIMIT @max_rows::bigint;

-- name: EventListRecentAfter :many
-- A quiet consumer round's read (ADR 0105): as EventListAfter, but only
-- in the partitions of events stamped at or after @since, which a generic
-- plan prunes at its start; the round handles what it read only as far
-- as it follows the cursor without a gap.
SELECT * FROM event_log WHERE seq > @after AND occurred_at >= @since::timestamptz
ORDER BY seq LIMIT @max_rows::bigint;

-- name: EventHeadSeq :one
-- The highest committed seq, 0 for an empty log.
SELECT coalesce(max(seq), 0)::bigint AS head_seq FROM event_log;

-- name: EventLogWatermarkMinRetainedSeq :one
-- One above the retention watermark: every committed event at or above it
-- is in the log.
SELECT (dropped_through_seq + 1)::bigint AS min_retained_seq FROM event_log_watermark;

-- name: EventLogPartitionMaintain :one
-- The SECURITY DEFINER function of migration 00050 (bothy_app has no DDL
-- rights); it takes a transaction-scoped advisory lock first. The casts
-- tell sqlc that the counts are never NULL, which it cannot see in the
-- function's RETURNS TABLE.
SELECT created::int AS created, dropped::int AS dropped FROM event_log_maintain_partitions(@now::timestamptz, @partition_interval::interval,
    @partition_ahead::interval, @event_retention::interval);

-- name: ActivityWritersEndedBefore :one
-- True when no other transaction of this database with an id at or below
-- the horizon still runs. pg_stat_activity shows a role the
-- transactions of its own sessions, which are the ones that append.
-- backend_xid is a 32-bit xid, so both sides are compared by age(), which
-- measures from the same point within one statement; ages stay far below
-- 2^31 here.
SELECT NOT EXISTS (
    SELECT 1 FROM pg_catalog.pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL
      AND age(backend_xid) >= age(((@horizon::xid8)::text::numeric % 4294967296)::text::xid)
) AS ended;

-- name: EventLogWake :exec
-- The consumers' notification after appends committed, sent by the Waker
-- (ADR 0091) or right after the COMMIT of the unit of work that appended
-- (pg.FollowCommit, ADR 0094), in a transaction of its own:
-- set_config(..., true) turns synchronous_commit
-- off until that transaction ends, so its commit does not wait for its WAL
-- flush while it holds the lock of PreCommit_Notify.
SELECT set_config('synchronous_commit', 'off', true), pg_notify(@channel::text, '');
