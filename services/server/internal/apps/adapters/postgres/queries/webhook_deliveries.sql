-- Delivery side of outgoing webhooks (app.DeliveryStore): the rows a
-- consumer round creates, the claim, lease and record of an attempt, and
-- the system transitions of a subscription. The subscription row is locked
-- with FOR NO KEY UPDATE: delivery jobs and owner changes (FOR UPDATE)
-- serialize on it, while a round inserting delivery rows (FOR KEY SHARE
-- through the foreign key) does not wait. Lock order: the subscription row,
-- then its delivery rows.

-- name: WebhookSubscriptionDeliveryCandidates :many
-- Index webhook_subscriptions_candidates_idx (partial GIN on event_types
-- with exactly the state and target predicate below). The round asks this
-- only for an event any app may see (an event on the instance). pending
-- and last_event_seq are WebhookSubscriptionDeliveryCandidatesOf's.
SELECT s.id, s.state, i.id AS installation_id, i.app_id, i.state AS installation_state, a.principal_id,
       i.granted_scopes, f.pending::int AS pending, f.last_event_seq::bigint AS last_event_seq
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
JOIN apps a ON a.id = i.app_id
CROSS JOIN LATERAL webhook_subscription_round_facts(s.id, s.state = 'active', @count_limit::int) AS f
WHERE s.state IN ('active', 'paused')
  AND s.app_installation_id IS NOT NULL
  AND s.event_types @> ARRAY[@event_type::text]
  AND i.state IN ('active', 'suspended')
  AND i.event_subscriptions @> ARRAY[@event_type::text]
ORDER BY s.id;

-- name: WebhookSubscriptionDeliveryCandidatesOf :many
-- The candidates among the apps of the given principals (the apps that can
-- see the event, authz.DeliveryRouter.Reach): from apps_principal_id_key
-- through the current installation to the subscriptions of the
-- installation, so the cost follows those apps, never every subscription
-- of the type (D-M2-26-35). The LATERAL subqueries with OFFSET 0 keep that
-- order in every plan: pgx prepares the statement, and the generic plan
-- PostgreSQL keeps after five runs, or any plan before the tables are
-- analyzed, estimated one installation of the type and probed every app
-- once per installation (D-SQ-15).
--
-- With each candidate come what the round decides its rows with before it
-- writes them (webhook_subscription_round_facts, migration 00061,
-- D-M2-26-84): pending, the open rows of an active subscription counted up
-- to count_limit (0 for a paused one, whose quota is not counted), and
-- last_event_seq, the highest event seq of any of its rows, above which no
-- row of the round can exist already.
SELECT s.id, s.state, i.id AS installation_id, i.app_id, i.state AS installation_state, a.principal_id,
       i.granted_scopes, f.pending::int AS pending, f.last_event_seq::bigint AS last_event_seq
FROM apps a
CROSS JOIN LATERAL (
    SELECT ai.id, ai.app_id, ai.state, ai.granted_scopes FROM app_installations ai
    WHERE ai.app_id = a.id
      AND ai.state IN ('active', 'suspended')
      AND @event_type::text = ANY(ai.event_subscriptions)
    OFFSET 0
) AS i
CROSS JOIN LATERAL (
    SELECT ws.id, ws.state FROM webhook_subscriptions ws
    WHERE ws.app_installation_id = i.id
      AND ws.state IN ('active', 'paused')
      AND @event_type::text = ANY(ws.event_types)
    OFFSET 0
) AS s
CROSS JOIN LATERAL webhook_subscription_round_facts(s.id, s.state = 'active', @count_limit::int) AS f
WHERE a.principal_id = ANY(@principal_ids::uuid[])
ORDER BY s.id;

-- name: WebhookDeliveryInsertForRound :many
-- Every row of a consumer round in one statement: row i is delivery ids[i]
-- of event event_seqs[i] to subscription_ids[i]. Only subscriptions that
-- still exist get a row: the round read its candidates earlier in the
-- transaction, and an owner may have deleted one since. FOR KEY SHARE
-- skips a row deleted meanwhile (it waits for a delete in progress) and
-- holds the rest until the round commits, so the foreign key check never
-- fails and a deleted subscription costs only itself (D-M2-26-41).
WITH live AS (
    SELECT s.id FROM webhook_subscriptions s
    WHERE s.id = ANY(@subscription_ids::uuid[])
    FOR KEY SHARE
)
INSERT INTO webhook_deliveries (
    id, subscription_id, event_seq, event_id, event_occurred_at, status, attempt, next_attempt_at, created_at, updated_at
)
SELECT u.id, u.subscription_id, u.event_seq, u.event_id, u.event_occurred_at, 'pending', 0,
       @now::timestamptz, @now, @now
FROM (SELECT unnest(@ids::uuid[]) AS id, unnest(@subscription_ids::uuid[]) AS subscription_id,
             unnest(@event_seqs::bigint[]) AS event_seq, unnest(@event_ids::uuid[]) AS event_id,
             unnest(@event_occurred_ats::timestamptz[]) AS event_occurred_at) AS u
JOIN live ON live.id = u.subscription_id
ON CONFLICT (subscription_id, event_seq) DO NOTHING
RETURNING id;

-- name: WebhookSubscriptionLockLive :many
SELECT s.id, s.state, i.app_id
FROM webhook_subscriptions s
JOIN app_installations i ON i.id = s.app_installation_id
WHERE s.state IN ('active', 'paused')
  AND s.app_installation_id IS NOT NULL
  AND i.state IN ('active', 'suspended')
ORDER BY s.id
FOR NO KEY UPDATE OF s;

-- name: WebhookSubscriptionSetSystemState :execrows
UPDATE webhook_subscriptions
SET state = @state, disabled_at = @disabled_at, updated_at = @now
WHERE id = @id;

-- name: WebhookDeliveryPendingHeads :many
-- The subscription's pending rows in seq order, at most @max_heads
-- (index webhook_deliveries_head_idx): the heads a run may claim next.
-- The caller holds the subscription's row lock.
SELECT h.id, h.event_seq, h.event_occurred_at, h.next_attempt_at::timestamptz AS next_attempt_at
FROM webhook_deliveries h
WHERE h.subscription_id = @subscription_id AND h.status = 'pending'
ORDER BY h.event_seq
LIMIT @max_heads::int;

-- name: WebhookDeliveryClaimHeadsMany :many
-- Claims the batches of several subscriptions (claim i is element i of
-- @subscription_ids; its heads are the elements of @head_ids whose
-- @head_ords is i, in seq order): attempt + 1 for each head, which the
-- caller read under the subscription's row lock, which it still holds, and
-- found due and consecutive from the subscription's head (ADR 0088); the
-- subscription takes the lease of the batch (@lease_delivery_ids, its
-- first head, and @lease_untils) and its rate window (the elements of
-- @rate_window_ends whose @rate_window_ords is i, in their order). One
-- statement claims for every run of a shared unit of work (D-M2-26-77). A
-- subscription's heads are claimed only when they are, as this statement
-- sees them, exactly its first pending rows in seq order and due at its
-- @nows: a read in the statement that took the row lock sees the rows as
-- they were before the lock waited, so a head another transaction recorded
-- or made pending meanwhile is not claimed from a stale read (no row; the
-- caller reads the heads again). Where @has_wake_ups is true the claim
-- also names the lease wake-up (@wake_up_ats) the caller inserts in the
-- same unit of work (ADR 0087); false keeps the one named. leased is 1
-- when the subscription took the lease.
WITH head AS (
    SELECT unnest(@head_ids::uuid[]) AS id, unnest(@head_ords::int[]) AS ord
), want AS MATERIALIZED (
    -- MATERIALIZED: fresh names ids four times, and an inlined CTE would
    -- gather each subscription's heads there four times over.
    SELECT w.ord, w.subscription_id, w.now, w.lease_delivery_id, w.lease_until, w.has_wake_up, w.wake_up_at,
           (SELECT array_agg(h.id) FROM head h WHERE h.ord = w.ord) AS ids
    FROM (
        SELECT generate_subscripts(@subscription_ids::uuid[], 1) AS ord,
               unnest(@subscription_ids::uuid[]) AS subscription_id, unnest(@nows::timestamptz[]) AS now,
               unnest(@lease_delivery_ids::uuid[]) AS lease_delivery_id,
               unnest(@lease_untils::timestamptz[]) AS lease_until,
               unnest(@has_wake_ups::boolean[]) AS has_wake_up, unnest(@wake_up_ats::timestamptz[]) AS wake_up_at
    ) AS w
), fresh AS MATERIALIZED (
    -- Once per subscription: inlined, the planner ran it for every claimed
    -- row.
    SELECT w.ord, w.subscription_id, w.now, w.lease_delivery_id, w.lease_until, w.has_wake_up, w.wake_up_at, w.ids
    FROM want w
    CROSS JOIN LATERAL (
        SELECT count(*) = cardinality(w.ids) AND coalesce(bool_and(f.due AND f.id = ANY(w.ids)), false) AS ok
        FROM (
            SELECT p.id, p.next_attempt_at <= w.now AS due FROM webhook_deliveries p
            WHERE p.subscription_id = w.subscription_id AND p.status = 'pending'
            ORDER BY p.event_seq
            LIMIT cardinality(w.ids)
        ) f
    ) chk
    WHERE chk.ok
), claimed AS (
    -- Each head finds its row through the primary key, the only way to it
    -- (d.id = h.id, no d.id = ANY(@head_ids) beside it), so the heads drive
    -- the join and each row is probed once (D-SQ-25): with the key beside
    -- it, the planner took the table's side as the outer one, estimated at
    -- one row after the status test, and read the heads once per row
    -- (14,400 rows for a claim of 120). No test of subscription_id invites
    -- its unique index (subscription_id, event_seq) into a BitmapAnd that
    -- reads every row of the subscription (D-SQ-17); fresh proved the ids
    -- the subscription's. Never a search of the arrays, which grows with
    -- the square of the heads of a claim of many subscriptions.
    UPDATE webhook_deliveries d
    SET attempt = d.attempt + 1, updated_at = f.now
    FROM head h
    JOIN fresh f ON f.ord = h.ord
    WHERE d.id = h.id AND coalesce(d.status, '') = 'pending'
    RETURNING f.ord, d.id, d.event_seq, d.event_id, d.event_occurred_at, d.attempt, d.created_at
), leased AS (
    UPDATE webhook_subscriptions s
    SET lease_delivery_id = f.lease_delivery_id, lease_until = f.lease_until,
        rate_window = coalesce((
            SELECT array_agg(r.ends ORDER BY r.at)
            FROM (
                SELECT generate_subscripts(@rate_window_ends::timestamptz[], 1) AS at,
                       unnest(@rate_window_ords::int[]) AS ord, unnest(@rate_window_ends::timestamptz[]) AS ends
            ) AS r
            WHERE r.ord = f.ord), '{}'),
        wake_up_at = CASE WHEN f.has_wake_up THEN f.wake_up_at ELSE s.wake_up_at END
    FROM fresh f
    WHERE s.id = ANY(@subscription_ids::uuid[]) AND s.id = f.subscription_id
      AND EXISTS (SELECT 1 FROM claimed c WHERE c.ord = f.ord)
    RETURNING f.ord
)
SELECT c.ord::int AS ord, c.id, c.event_seq, c.event_id, c.event_occurred_at, c.attempt, c.created_at,
       (SELECT count(*) FROM leased l WHERE l.ord = c.ord)::int AS leased
FROM claimed c
ORDER BY c.ord, c.event_seq;

-- name: WebhookDeliveryClaimHeads :many
-- The claim of one subscription's batch, as WebhookDeliveryClaimHeadsMany
-- claims several: its plan is lighter, which a run of its own job pays on
-- every batch (D-M2-26-77). Same rules:
-- Claims the heads @ids (attempt + 1 each), which the caller read under
-- the subscription's row lock, which it still holds, and found due and
-- consecutive from the subscription's head (ADR 0088); the subscription
-- takes the lease of the batch (lease_delivery_id, the first head, and
-- lease_until) and @rate_window. The heads are claimed only when they are,
-- as this statement sees them, exactly the subscription's first pending
-- rows in seq order and due: a read in the statement that took the row
-- lock sees the rows as they were before the lock waited, so a head
-- another transaction recorded or made pending meanwhile is not claimed
-- from a stale read (no row; the caller reads the heads again). With
-- @wake_up_at the claim also names the lease wake-up the caller inserts in
-- the same unit of work (ADR 0087); NULL keeps the one named. leased is 1
-- when the subscription took the lease.
WITH first_pending AS (
    SELECT h.id, h.next_attempt_at <= @now::timestamptz AS due FROM webhook_deliveries h
    WHERE h.subscription_id = @subscription_id AND h.status = 'pending'
    ORDER BY h.event_seq
    LIMIT cardinality(@ids::uuid[])
), fresh AS MATERIALIZED (
    -- Once per claim: inlined, the planner ran it for every claimed row.
    SELECT count(*) = cardinality(@ids::uuid[])
           AND coalesce(bool_and(f.due AND f.id = ANY(@ids::uuid[])), false) AS ok
    FROM first_pending f
), claimed AS (
    UPDATE webhook_deliveries d
    SET attempt = d.attempt + 1, updated_at = @now
    FROM fresh
    -- By the primary key only, as the record's update (D-SQ-17); fresh
    -- proved the ids the subscription's, so no test of subscription_id
    -- invites its unique index (subscription_id, event_seq) into a
    -- BitmapAnd that reads every row of the subscription.
    WHERE fresh.ok AND d.id = ANY(@ids::uuid[]) AND coalesce(d.status, '') = 'pending'
    RETURNING d.id, d.event_seq, d.event_id, d.event_occurred_at, d.attempt, d.created_at
), leased AS (
    UPDATE webhook_subscriptions s
    SET lease_delivery_id = @lease_delivery_id, lease_until = @lease_until::timestamptz,
        rate_window = @rate_window::timestamptz[],
        wake_up_at = coalesce(sqlc.narg(wake_up_at)::timestamptz, s.wake_up_at)
    WHERE s.id = @subscription_id AND EXISTS (SELECT 1 FROM claimed)
    RETURNING s.id
)
SELECT c.id, c.event_seq, c.event_id, c.event_occurred_at, c.attempt, c.created_at,
       (SELECT count(*) FROM leased)::int AS leased
FROM claimed c
ORDER BY c.event_seq;

-- name: WebhookDeliveryFinishUnsent :execrows
-- A head that ends without a request, before any claim: its attempt
-- stays, since no request of this run left.
UPDATE webhook_deliveries d
SET status = 'dead', next_attempt_at = NULL, last_error = @last_error, updated_at = @now, finished_at = @now
WHERE d.id = @id AND d.status = 'pending';

-- name: WebhookDeliveryExpirePending :one
WITH expired AS (
    UPDATE webhook_deliveries
    SET status = 'dead', next_attempt_at = NULL, last_error = 'event_expired', updated_at = @now, finished_at = @now
    WHERE subscription_id = @subscription_id AND status = 'pending' AND event_seq < @below_seq
    RETURNING event_seq
)
SELECT count(*)::int AS expired,
       coalesce(min(event_seq), 0)::bigint AS first_seq,
       coalesce(max(event_seq), 0)::bigint AS last_seq
FROM expired;

-- name: WebhookSubscriptionLockDeliveryTargets :many
-- Locks the app subscriptions @ids (FOR NO KEY UPDATE OF s, the module's
-- first lock) in the order of their ids, so that two units of work that
-- lock some of the same subscriptions take their locks in the same order,
-- and returns what a delivery needs of each, its installation and its app
-- principal, with up to @next_heads of its pending rows in seq order
-- (next_*; index webhook_deliveries_head_idx), the heads a run claims
-- next. A subscription that does not exist or has no installation has no
-- row. The statement writes nothing, so a unit of work of several runs
-- (ADR 0089) locks all of them with one (D-M2-26-76). The heads are read
-- as they were before a lock waited: ClaimHeads claims them only when they
-- are still the subscription's first pending rows.
WITH target AS MATERIALIZED (
    SELECT s.id, s.state, s.url, s.event_types, s.hmac_enabled, s.hmac_generation, s.hmac_rotated_at,
           s.consecutive_failures, s.disabled_at, s.lease_delivery_id, s.lease_until,
           s.max_per_second, s.rate_window, s.wake_up_at,
           i.id AS installation_id, i.app_id, i.state AS installation_state, i.granted_scopes,
           i.event_subscriptions, a.principal_id
    FROM webhook_subscriptions s
    JOIN app_installations i ON i.id = s.app_installation_id
    JOIN apps a ON a.id = i.app_id
    WHERE s.id = ANY(@ids::uuid[])
    ORDER BY s.id
    FOR NO KEY UPDATE OF s
)
SELECT t.id, t.state, t.url, t.event_types, t.hmac_enabled, t.hmac_generation, t.hmac_rotated_at,
       t.consecutive_failures, t.disabled_at, t.lease_delivery_id, t.lease_until,
       t.max_per_second, t.rate_window, t.wake_up_at,
       t.installation_id, t.app_id, t.installation_state, t.granted_scopes,
       t.event_subscriptions, t.principal_id,
       nxt.ids::uuid[] AS next_ids,
       nxt.seqs::bigint[] AS next_event_seqs,
       nxt.occurred_ats::timestamptz[] AS next_event_occurred_ats,
       nxt.due_ats::timestamptz[] AS next_attempt_ats
FROM target t
CROSS JOIN LATERAL (
    SELECT coalesce(array_agg(p.id ORDER BY p.event_seq), '{}') AS ids,
           coalesce(array_agg(p.event_seq ORDER BY p.event_seq), '{}') AS seqs,
           coalesce(array_agg(p.event_occurred_at ORDER BY p.event_seq), '{}') AS occurred_ats,
           coalesce(array_agg(p.next_attempt_at ORDER BY p.event_seq), '{}') AS due_ats
    FROM (
        SELECT h.id, h.event_seq, h.event_occurred_at, h.next_attempt_at FROM webhook_deliveries h
        WHERE h.subscription_id = t.id AND h.status = 'pending'
        ORDER BY h.event_seq
        LIMIT @next_heads::int
    ) p
) nxt
ORDER BY t.id;

-- name: WebhookSubscriptionLockLeased :many
-- The subscriptions of @ids whose lease is in force at @now, each locked
-- FOR SHARE until the consumer round's transaction ends, in the order of
-- their ids (ADR 0106). FOR SHARE conflicts with the FOR NO KEY UPDATE
-- every record takes before it reads the next heads (D-M2-26-83), so the
-- lease's holder reads the round's rows; SKIP LOCKED leaves out, without
-- waiting, a subscription another transaction holds so (a record or a
-- claim under way), which then gets its job as before.
SELECT id FROM webhook_subscriptions
WHERE id = ANY(@ids::uuid[]) AND lease_delivery_id IS NOT NULL AND lease_until > @now::timestamptz
ORDER BY id
FOR SHARE SKIP LOCKED;

-- name: WebhookSubscriptionLockForRecord :exec
-- Locks the subscriptions @ids as the records take them (FOR NO KEY
-- UPDATE, in the order of the ids), in a statement of its own sent right
-- before a record's (D-M2-26-83): a record reads its subscription's next
-- heads with the snapshot its statement began with, and a run that found
-- the lease in force left the rows it came for to the lease's holder, so
-- the record must begin after it holds the lock, when every row
-- committed before that run looked is in its snapshot.
SELECT 1 FROM webhook_subscriptions WHERE id = ANY(@ids::uuid[]) ORDER BY id FOR NO KEY UPDATE;

-- name: WebhookSubscriptionRecordAttemptsMany :many
-- Records the sent attempts of the batches of several subscriptions
-- (D-M2-26-68, ADR 0088) with one statement (D-M2-26-78): record i (the
-- elements i of @ids and of every other array of one element per record)
-- locks the subscription @ids[i] (FOR NO KEY UPDATE OF s, in the order of
-- the ids) and records its deliveries, the elements of the per-delivery
-- arrays whose @delivery_ords is i, and gives back its unsent heads, the
-- elements of @unsent_ids whose @unsent_ords is i. It returns for each
-- subscription that still exists with an installation what a delivery
-- needs of it, its installation and its app principal, as they were
-- before this statement wrote anything, with up to @next_heads of its
-- pending rows in seq order (next_*), the heads a run claims next,
-- leaving out the rows @delivery_ids, and its ord (i).
--
-- A record writes only when its subscription's standing and rate are
-- what the caller computed it from (as_expected; otherwise nothing of it
-- is written and the caller computes it again from the returned row,
-- under the lock this statement took); each delivery only while it is
-- still pending with its claimed attempt (stored_attempts is what the row
-- keeps: the claimed attempt, or one less when no request left); the
-- claimed heads the batch did not send get their attempt back; the
-- subscription's change when @change_subscriptions[i] and every sent
-- delivery of the record was written; in any case the lease of the batch
-- (@lease_delivery_ids[i]) given back (also when a delivery was deleted
-- or redelivered meanwhile, so the next head never waits for a lease that
-- covers nothing) and the rate window (the elements of @rate_window_ends
-- whose @rate_window_ords is i) with the attempts' ends (requests went
-- out either way); the expected window is given the same way
-- (@expect_rate_window_ords, @expect_rate_window_ends). recorded counts
-- the deliveries written. The next heads read the rows as they were
-- before this statement, so a head given back is named with the time it
-- is due; the statement begins once WebhookSubscriptionLockForRecord
-- holds the locks, so they include every row committed before
-- (D-M2-26-83). Every write finds its rows through their primary keys,
-- each element of the parameter arrays probing its row once (D-SQ-17,
-- D-SQ-25, D-M2-26-77).
WITH locked AS (
    -- The lock alone, as WebhookSubscriptionLockDeliveryTargets takes it:
    -- through the primary key by the parameter @ids, in the order of the
    -- ids. A join with rec here would let the planner, which cannot
    -- count the elements of a parameter array, scan the tables to meet
    -- it. A record finds its row by its place in @ids (at most
    -- webhook.run_max_subscriptions elements).
    SELECT s.id, s.state, s.url, s.event_types, s.hmac_enabled, s.hmac_generation, s.hmac_rotated_at,
           s.consecutive_failures, s.disabled_at, s.lease_delivery_id, s.lease_until,
           s.max_per_second, s.rate_window, s.wake_up_at,
           i.id AS installation_id, i.app_id, i.state AS installation_state, i.granted_scopes,
           i.event_subscriptions, a.principal_id, array_position(@ids::uuid[], s.id) AS ord
    FROM webhook_subscriptions s
    JOIN app_installations i ON i.id = s.app_installation_id
    JOIN apps a ON a.id = i.app_id
    WHERE s.id = ANY(@ids::uuid[])
    ORDER BY s.id
    FOR NO KEY UPDATE OF s
), target AS MATERIALIZED (
    -- The values of record i are the elements i of the arrays of one
    -- element per record.
    SELECT l.*,
           coalesce(l.state = (@expect_states::text[])[l.ord]
            AND l.consecutive_failures = (@expect_consecutive_failures::int[])[l.ord]
            AND l.disabled_at IS NOT DISTINCT FROM (CASE WHEN (@expect_has_disabled_ats::boolean[])[l.ord]
                                                         THEN (@expect_disabled_ats::timestamptz[])[l.ord] END)
            AND coalesce(l.max_per_second, 0) = (@expect_max_per_seconds::int[])[l.ord]
            AND l.rate_window = coalesce((
                SELECT array_agg(w.ends ORDER BY w.at)
                FROM (
                    SELECT generate_subscripts(@expect_rate_window_ends::timestamptz[], 1) AS at,
                           unnest(@expect_rate_window_ords::int[]) AS ord,
                           unnest(@expect_rate_window_ends::timestamptz[]) AS ends
                ) AS w
                WHERE w.ord = l.ord), '{}'), false)::boolean AS as_expected
    FROM locked l
), sent AS (
    SELECT unnest(@delivery_ids::uuid[]) AS id, unnest(@delivery_ords::int[]) AS ord,
           unnest(@attempts::int[]) AS attempt, unnest(@stored_attempts::int[]) AS stored_attempt,
           unnest(@statuses::text[]) AS status, unnest(@next_attempt_ats::timestamptz[]) AS next_attempt_at,
           unnest(@last_errors::text[]) AS last_error, unnest(@response_codes::int[]) AS response_code,
           unnest(@delivered_ats::timestamptz[]) AS delivered_at
), unsent AS (
    SELECT unnest(@unsent_ids::uuid[]) AS id, unnest(@unsent_ords::int[]) AS ord,
           unnest(@unsent_attempts::int[]) AS attempt
), delivery AS (
    -- Each element of the arrays (sent) finds its row through the primary
    -- key, the only way to it (d.id = o.id, no d.id = ANY beside it), so
    -- the elements drive the join and each row is probed once (D-SQ-25):
    -- with the key beside it the planner took the table as the outer side
    -- and read sent once per row (15,625 rows for a record of 125). Never
    -- a search of the arrays, which grows with the square of the
    -- deliveries of a record of many subscriptions. The status is tested
    -- as coalesce(status, '') so that the partial index of the pending
    -- rows (webhook_deliveries_head_idx) cannot serve the test, which with
    -- stale statistics the planner combined with the key (BitmapAnd) and
    -- read every pending row of the table (D-SQ-17).
    UPDATE webhook_deliveries d
    SET status = o.status,
        attempt = o.stored_attempt,
        next_attempt_at = CASE WHEN o.status = 'pending' THEN o.next_attempt_at END,
        last_error = nullif(o.last_error, ''),
        response_code = nullif(o.response_code, 0),
        delivered_at = CASE WHEN o.status = 'succeeded' THEN o.delivered_at END,
        updated_at = (@nows::timestamptz[])[o.ord],
        finished_at = CASE WHEN o.status = 'pending' THEN NULL ELSE (@nows::timestamptz[])[o.ord] END
    FROM sent o
    WHERE d.id = o.id AND coalesce(d.status, '') = 'pending'
      AND d.attempt = o.attempt
      AND o.ord IN (SELECT t.ord FROM target t WHERE t.as_expected)
    RETURNING o.ord
), given_back AS (
    UPDATE webhook_deliveries d
    SET attempt = d.attempt - 1, updated_at = (@nows::timestamptz[])[u.ord]
    FROM unsent u
    WHERE d.id = u.id AND coalesce(d.status, '') = 'pending'
      AND d.attempt = u.attempt
      AND u.ord IN (SELECT t.ord FROM target t WHERE t.as_expected)
    RETURNING d.id
), outcome AS MATERIALIZED (
    -- A record is written when every delivery it sent was; it changes
    -- its subscription only then. MATERIALIZED: the update below names
    -- changes in six of its SET clauses, and an inlined CTE would count
    -- the record's rows there six times over (three subplans each).
    SELECT t.id, t.ord,
           coalesce((SELECT count(*) FROM delivery x WHERE x.ord = t.ord) > 0
                    AND (SELECT count(*) FROM delivery x WHERE x.ord = t.ord)
                        = (SELECT count(*) FROM sent o WHERE o.ord = t.ord),
                    false) AND (@change_subscriptions::boolean[])[t.ord] AS changes
    FROM target t
    WHERE t.as_expected
), subscription AS (
    UPDATE webhook_subscriptions s
    SET state = CASE WHEN o.changes THEN (@states::text[])[o.ord] ELSE s.state END,
        disabled_at = CASE WHEN o.changes
                           THEN (CASE WHEN (@has_disabled_ats::boolean[])[o.ord] THEN (@disabled_ats::timestamptz[])[o.ord] END)
                           ELSE s.disabled_at END,
        consecutive_failures = CASE WHEN o.changes THEN (@consecutive_failures::int[])[o.ord] ELSE s.consecutive_failures END,
        last_delivered_seq = CASE WHEN o.changes AND (@delivered_seqs::bigint[])[o.ord] > 0
                                  THEN GREATEST(s.last_delivered_seq, (@delivered_seqs::bigint[])[o.ord])
                                  ELSE s.last_delivered_seq END,
        signing_key_kid = CASE WHEN o.changes
                               THEN coalesce(nullif((@signing_key_kids::text[])[o.ord], ''), s.signing_key_kid)
                               ELSE s.signing_key_kid END,
        lease_delivery_id = CASE WHEN s.lease_delivery_id = (@lease_delivery_ids::uuid[])[o.ord]
                                 THEN NULL ELSE s.lease_delivery_id END,
        lease_until = CASE WHEN s.lease_delivery_id = (@lease_delivery_ids::uuid[])[o.ord] THEN NULL ELSE s.lease_until END,
        rate_window = coalesce((
            SELECT array_agg(w.ends ORDER BY w.at)
            FROM (
                SELECT generate_subscripts(@rate_window_ends::timestamptz[], 1) AS at,
                       unnest(@rate_window_ords::int[]) AS ord, unnest(@rate_window_ends::timestamptz[]) AS ends
            ) AS w
            WHERE w.ord = o.ord), '{}'),
        updated_at = CASE WHEN o.changes THEN (@nows::timestamptz[])[o.ord] ELSE s.updated_at END
    FROM outcome o
    WHERE s.id = ANY(@ids::uuid[]) AND s.id = o.id
    RETURNING s.id
)
SELECT t.id, t.state, t.url, t.event_types, t.hmac_enabled, t.hmac_generation, t.hmac_rotated_at,
       t.consecutive_failures, t.disabled_at, t.lease_delivery_id, t.lease_until,
       t.max_per_second, t.rate_window, t.wake_up_at,
       t.installation_id, t.app_id, t.installation_state, t.granted_scopes,
       t.event_subscriptions, t.principal_id, t.as_expected, t.ord::int AS ord,
       (SELECT count(*) FROM delivery x WHERE x.ord = t.ord)::int AS recorded,
       nxt.ids::uuid[] AS next_ids,
       nxt.seqs::bigint[] AS next_event_seqs,
       nxt.occurred_ats::timestamptz[] AS next_event_occurred_ats,
       nxt.due_ats::timestamptz[] AS next_attempt_ats
FROM target t
CROSS JOIN LATERAL (
    SELECT coalesce(array_agg(p.id ORDER BY p.event_seq), '{}') AS ids,
           coalesce(array_agg(p.event_seq ORDER BY p.event_seq), '{}') AS seqs,
           coalesce(array_agg(p.event_occurred_at ORDER BY p.event_seq), '{}') AS occurred_ats,
           coalesce(array_agg(p.next_attempt_at ORDER BY p.event_seq), '{}') AS due_ats
    FROM (
        SELECT h.id, h.event_seq, h.event_occurred_at, h.next_attempt_at FROM webhook_deliveries h
        WHERE h.subscription_id = t.id AND h.status = 'pending' AND h.id <> ALL(@delivery_ids::uuid[])
        ORDER BY h.event_seq
        LIMIT @next_heads::int
    ) p
) nxt
ORDER BY t.ord;

-- name: WebhookSubscriptionRecordAttempt :one
-- The record of one subscription's batch (D-M2-26-68, ADR 0088), as
-- WebhookSubscriptionRecordAttemptsMany records several: its plan is a
-- third of theirs, which a run of its own job (one subscription) pays on
-- every batch (D-M2-26-78). Same rules: lock (FOR NO KEY UPDATE OF s),
-- written only when the subscription's standing and rate are what the
-- caller computed the record from (as_expected), each delivery only while
-- still pending with its claimed attempt, the unsent heads' attempts back,
-- the subscription's change when change_subscription and every delivery
-- was written, the lease of the batch and the rate window in any case
-- when as_expected; recorded counts the deliveries written; the next
-- heads (next_*) as they were before the statement, which begins once
-- WebhookSubscriptionLockForRecord holds the lock (D-M2-26-83), without
-- the rows @delivery_ids. Its row has the columns of theirs (ord 1), so one
-- mapping serves both.
WITH target AS (
    SELECT s.id, s.state, s.url, s.event_types, s.hmac_enabled, s.hmac_generation, s.hmac_rotated_at,
           s.consecutive_failures, s.disabled_at, s.lease_delivery_id, s.lease_until,
           s.max_per_second, s.rate_window, s.wake_up_at,
           i.id AS installation_id, i.app_id, i.state AS installation_state, i.granted_scopes,
           i.event_subscriptions, a.principal_id,
           coalesce(s.state = @expect_state::text
            AND s.consecutive_failures = @expect_consecutive_failures::int
            AND s.disabled_at IS NOT DISTINCT FROM sqlc.narg(expect_disabled_at)::timestamptz
            AND coalesce(s.max_per_second, 0) = @expect_max_per_second::int
            AND s.rate_window = @expect_rate_window::timestamptz[], false)::boolean AS as_expected
    FROM webhook_subscriptions s
    JOIN app_installations i ON i.id = s.app_installation_id
    JOIN apps a ON a.id = i.app_id
    WHERE s.id = @id
    FOR NO KEY UPDATE OF s
), delivery AS (
    -- The arrays hold one element per sent delivery of the batch, in seq
    -- order; a row finds its element by its id (array_position). The rows
    -- are found through the primary key (= ANY): the status is tested as
    -- coalesce(status, '') so that the partial index of the pending rows
    -- (webhook_deliveries_head_idx) cannot serve the test, which with
    -- stale statistics the planner combined with the key (BitmapAnd) and
    -- read every pending row of the table (D-SQ-17).
    UPDATE webhook_deliveries d
    SET status = (@statuses::text[])[array_position(@delivery_ids::uuid[], d.id)],
        attempt = (@stored_attempts::int[])[array_position(@delivery_ids::uuid[], d.id)],
        next_attempt_at = CASE WHEN (@statuses::text[])[array_position(@delivery_ids::uuid[], d.id)] = 'pending'
                               THEN (@next_attempt_ats::timestamptz[])[array_position(@delivery_ids::uuid[], d.id)] END,
        last_error = nullif((@last_errors::text[])[array_position(@delivery_ids::uuid[], d.id)], ''),
        response_code = nullif((@response_codes::int[])[array_position(@delivery_ids::uuid[], d.id)], 0),
        delivered_at = CASE WHEN (@statuses::text[])[array_position(@delivery_ids::uuid[], d.id)] = 'succeeded'
                            THEN (@delivered_ats::timestamptz[])[array_position(@delivery_ids::uuid[], d.id)] END,
        updated_at = @now,
        finished_at = CASE WHEN (@statuses::text[])[array_position(@delivery_ids::uuid[], d.id)] = 'pending'
                           THEN NULL ELSE @now::timestamptz END
    FROM target
    WHERE target.as_expected
      AND d.id = ANY(@delivery_ids::uuid[]) AND coalesce(d.status, '') = 'pending'
      AND d.attempt = (@attempts::int[])[array_position(@delivery_ids::uuid[], d.id)]
    RETURNING d.id
), given_back AS (
    UPDATE webhook_deliveries d
    SET attempt = d.attempt - 1, updated_at = @now
    FROM target
    WHERE target.as_expected
      AND d.id = ANY(@unsent_ids::uuid[]) AND coalesce(d.status, '') = 'pending'
      AND d.attempt = (@unsent_attempts::int[])[array_position(@unsent_ids::uuid[], d.id)]
    RETURNING d.id
), outcome AS (
    SELECT count(*) > 0 AND count(*) = cardinality(@delivery_ids::uuid[]) AS recorded FROM delivery
), subscription AS (
    UPDATE webhook_subscriptions s
    SET state = CASE WHEN o.recorded AND @change_subscription::boolean THEN @state::text ELSE s.state END,
        disabled_at = CASE WHEN o.recorded AND @change_subscription::boolean THEN sqlc.narg(disabled_at)::timestamptz ELSE s.disabled_at END,
        consecutive_failures = CASE WHEN o.recorded AND @change_subscription::boolean THEN @consecutive_failures::int ELSE s.consecutive_failures END,
        last_delivered_seq = CASE WHEN o.recorded AND @change_subscription::boolean AND @delivered_seq::bigint > 0
                                  THEN GREATEST(s.last_delivered_seq, @delivered_seq::bigint)
                                  ELSE s.last_delivered_seq END,
        signing_key_kid = CASE WHEN o.recorded AND @change_subscription::boolean
                               THEN coalesce(sqlc.narg(signing_key_kid)::text, s.signing_key_kid)
                               ELSE s.signing_key_kid END,
        lease_delivery_id = CASE WHEN s.lease_delivery_id = @lease_delivery_id THEN NULL ELSE s.lease_delivery_id END,
        lease_until = CASE WHEN s.lease_delivery_id = @lease_delivery_id THEN NULL ELSE s.lease_until END,
        rate_window = @rate_window::timestamptz[],
        updated_at = CASE WHEN o.recorded AND @change_subscription::boolean THEN @now ELSE s.updated_at END
    FROM outcome o, target
    WHERE target.as_expected AND s.id = target.id
    RETURNING s.id
)
SELECT t.id, t.state, t.url, t.event_types, t.hmac_enabled, t.hmac_generation, t.hmac_rotated_at,
       t.consecutive_failures, t.disabled_at, t.lease_delivery_id, t.lease_until,
       t.max_per_second, t.rate_window, t.wake_up_at,
       t.installation_id, t.app_id, t.installation_state, t.granted_scopes,
       t.event_subscriptions, t.principal_id, t.as_expected, 1::int AS ord,
       (SELECT count(*) FROM delivery)::int AS recorded,
       nxt.ids::uuid[] AS next_ids,
       nxt.seqs::bigint[] AS next_event_seqs,
       nxt.occurred_ats::timestamptz[] AS next_event_occurred_ats,
       nxt.due_ats::timestamptz[] AS next_attempt_ats
FROM target t
CROSS JOIN LATERAL (
    SELECT coalesce(array_agg(p.id ORDER BY p.event_seq), '{}') AS ids,
           coalesce(array_agg(p.event_seq ORDER BY p.event_seq), '{}') AS seqs,
           coalesce(array_agg(p.event_occurred_at ORDER BY p.event_seq), '{}') AS occurred_ats,
           coalesce(array_agg(p.next_attempt_at ORDER BY p.event_seq), '{}') AS due_ats
    FROM (
        SELECT h.id, h.event_seq, h.event_occurred_at, h.next_attempt_at FROM webhook_deliveries h
        WHERE h.subscription_id = t.id AND h.status = 'pending' AND h.id <> ALL(@delivery_ids::uuid[])
        ORDER BY h.event_seq
        LIMIT @next_heads::int
    ) p
) nxt;

-- name: WebhookDeliveryMarkHeadStalled :one
-- The head of a subscription whose delivery job spent its runs on errors
-- of our own (D-M2-26-42): it stays pending, names internal_error and is
-- due again at next_attempt_at. The caller holds the subscription's row
-- lock.
UPDATE webhook_deliveries d
SET last_error = 'internal_error', next_attempt_at = @next_attempt_at::timestamptz, updated_at = @now
FROM (
    SELECT h.id FROM webhook_deliveries h
    WHERE h.subscription_id = @subscription_id AND h.status = 'pending'
    ORDER BY h.event_seq
    LIMIT 1
) AS head
WHERE d.id = head.id
RETURNING d.event_seq;

-- name: WebhookDeliveryDeleteFinished :execrows
-- One retention batch: up to @batch finished deliveries (never a pending
-- one) that finished before @before, oldest first, through
-- webhook_deliveries_finished_idx (00052). Rows another transaction holds
-- (a redelivery) are skipped, so a batch never waits.
DELETE FROM webhook_deliveries
WHERE id IN (
    SELECT d.id FROM webhook_deliveries d
    WHERE d.finished_at IS NOT NULL AND d.finished_at < @before::timestamptz AND d.status <> 'pending'
    ORDER BY d.finished_at
    LIMIT @batch
    FOR UPDATE SKIP LOCKED);
