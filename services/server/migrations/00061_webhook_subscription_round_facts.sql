-- +goose Up
-- What a consumer round decides a candidate's rows with before it writes
-- them (D-M2-26-84), in one place for both candidate reads
-- (WebhookSubscriptionDeliveryCandidates and ...CandidatesOf): pending,
-- the subscription's open rows counted up to p_count_limit when
-- p_count_open (an active subscription; index webhook_deliveries_head_idx,
-- so a large backlog costs at most p_count_limit index entries), else 0;
-- last_event_seq, the highest event seq of any of its rows, 0 without one
-- (the unique key webhook_deliveries_subscription_event_key read
-- backwards). A plain SQL function without SET options and not SECURITY
-- DEFINER, so PostgreSQL inlines it into the calling statement's plan; it
-- runs with the caller's rights.
-- +goose StatementBegin
CREATE FUNCTION webhook_subscription_round_facts(p_subscription_id uuid, p_count_open boolean, p_count_limit int)
RETURNS TABLE (pending int, last_event_seq bigint)
LANGUAGE sql
STABLE
AS $$
    SELECT CASE WHEN p_count_open THEN (SELECT count(*) FROM (
               SELECT 1 FROM webhook_deliveries d
               WHERE d.subscription_id = p_subscription_id AND d.status = 'pending'
               LIMIT p_count_limit
           ) AS bounded) ELSE 0 END::int,
           coalesce((SELECT d.event_seq FROM webhook_deliveries d WHERE d.subscription_id = p_subscription_id
                     ORDER BY d.event_seq DESC LIMIT 1), 0)::bigint
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION webhook_subscription_round_facts(uuid, boolean, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION webhook_subscription_round_facts(uuid, boolean, int) TO bothy_app;

-- +goose Down
DROP FUNCTION webhook_subscription_round_facts(uuid, boolean, int);
