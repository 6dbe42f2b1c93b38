package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestRoundCandidatesOfReachedAppsFollowTheReachInEveryPlan: the round's
// read of the candidates among the apps that can see an event
// (WebhookSubscriptionDeliveryCandidatesOf) reads a few index pages
// whichever plan PostgreSQL makes for it, with statistics or before the
// tables were analyzed. pgx prepares every statement, and after five runs
// PostgreSQL may keep a generic plan, made without the arguments: one that
// estimated one installation of the type among 100 joined every
// installation to every app and read 205 buffers (analyzed) to 406 (not
// analyzed, as in every scenario of make bench-e2e) a round with 100 apps
// on 100 channels, against 6 to 10 in the order of the reach.
func TestRoundCandidatesOfReachedAppsFollowTheReachInEveryPlan(t *testing.T) {
	t.Parallel()
	c := newQueryLog()
	b := deliveryWorld(t, options{tracer: c})
	b.addFleet(t, 99)
	b.postAndRound(t, "for Tracker, the one app granted on Eskalation")
	sql, args := c.last("WebhookSubscriptionDeliveryCandidatesOf")
	require.NotEmpty(t, sql, "the round read the candidates of the apps that can see the event")
	require.Len(t, b.deliveries(t, b.sub), 1)
	for _, analyzed := range []bool{true, false} {
		if !analyzed {
			// A new server's tables before autovacuum analyzed them.
			_, err := b.db.Owner.Exec(bg, `SELECT pg_clear_relation_stats('public', t), pg_clear_attribute_stats('public', t, a.attname, false)
				FROM unnest(ARRAY['apps', 'app_installations', 'webhook_subscriptions']) AS t
				JOIN pg_attribute a ON a.attrelid = ('public.' || t)::regclass AND a.attnum > 0 AND NOT a.attisdropped`)
			require.NoError(t, err)
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			require.LessOrEqual(t, b.bufferHits(t, mode, sql, args), 20,
				"%s, analyzed %v: the read follows the reached apps through their indexes, not every app per installation",
				mode, analyzed)
		}
	}
}

// bufferHits runs sql with args once through a prepared statement under
// plan_cache_mode mode and returns the shared buffers its execution hit
// (EXPLAIN ANALYZE).
func (b *bundle) bufferHits(t *testing.T, mode, sql string, args []any) int {
	t.Helper()
	conn, err := b.db.App.Acquire(bg)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(bg, `SET plan_cache_mode = `+pgx.Identifier{mode}.Sanitize())
	require.NoError(t, err)
	defer func() {
		_, err := conn.Exec(bg, `RESET plan_cache_mode`)
		require.NoError(t, err)
		_, err = conn.Exec(bg, `DEALLOCATE measured`)
		require.NoError(t, err)
	}()
	_, err = conn.Exec(bg, `PREPARE measured AS `+sql, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	// EXECUTE takes no bound parameters: each argument goes as a literal
	// of the statement's parameter type.
	var types []string
	require.NoError(t, conn.QueryRow(bg, `SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = 'measured'`).
		Scan(&types))
	require.Len(t, types, len(args))
	literals := make([]string, len(args))
	for i, arg := range args {
		require.NoError(t, conn.QueryRow(bg, `SELECT quote_literal(($1::`+types[i]+`)::text) || '::' || $2`, arg, types[i]).
			Scan(&literals[i]))
	}
	var plan []struct {
		Plan struct {
			SharedHitBlocks int `json:"Shared Hit Blocks"`
		} `json:"Plan"`
	}
	var out string
	require.NoError(t, conn.QueryRow(bg, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE measured(`+
		strings.Join(literals, ", ")+`)`).Scan(&out))
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	require.Len(t, plan, 1)
	return plan[0].Plan.SharedHitBlocks
}
