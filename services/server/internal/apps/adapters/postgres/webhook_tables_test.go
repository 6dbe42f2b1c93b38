package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
)

// column is one column of the data model: name, SQL type as format_type
// prints it, nullability and default expression ("" for none).
type column struct {
	name, typ string
	nullable  bool
	def       string
}

// columns returns the columns of table in order.
func columns(t *testing.T, pool *pgxpool.Pool, table string) []column {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
		       coalesce(pg_get_expr(d.adbin, d.adrelid), '')
		FROM pg_attribute a
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, table)
	require.NoError(t, err)
	defer rows.Close()
	var out []column
	for rows.Next() {
		var c column
		require.NoError(t, rows.Scan(&c.name, &c.typ, &c.nullable, &c.def))
		out = append(out, c)
	}
	require.NoError(t, rows.Err())
	return out
}

// constraints returns name -> definition of the constraints of table of
// kind contype (c check, f foreign key, u unique, p primary key).
func constraints(t *testing.T, pool *pgxpool.Pool, table, contype string) map[string]string {
	t.Helper()
	return definitions(t, pool, `SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = $1::regclass AND contype = $2`, table, contype)
}

// indexes returns name -> definition of the indexes of table.
func indexes(t *testing.T, pool *pgxpool.Pool, table string) map[string]string {
	t.Helper()
	return definitions(t, pool, `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1`, table)
}

// definitions runs query, which selects a name and a definition, into a map.
func definitions(t *testing.T, pool *pgxpool.Pool, query string, args ...any) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), query, args...)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		require.NoError(t, rows.Scan(&name, &def))
		out[name] = def
	}
	require.NoError(t, rows.Err())
	return out
}

// TestWebhookTablesMatchDataModel holds migrations 00040 and 00041 to the
// data model of webhook_subscriptions and webhook_deliveries
// (docs/spec/03-data-model.md 4.11): columns with types, nullability and
// defaults, the checks (the two exclusivity checks refuse rows with
// SQLSTATE 23514), the foreign keys with their actions, the unique key,
// the indexes and the privileges of bothy_app.
func TestWebhookTablesMatchDataModel(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()

	t.Run("webhook_subscriptions columns", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, []column{
			{"id", "uuid", false, ""},
			{"app_installation_id", "uuid", true, ""},
			{"agent_id", "uuid", true, ""},
			{"url", "text", false, ""},
			{"event_types", "text[]", false, ""},
			{"state", "text", false, ""},
			{"signing_key_kid", "text", false, ""},
			{"hmac_enabled", "boolean", false, "false"},
			{"hmac_generation", "integer", false, "0"},
			{"hmac_rotated_at", "timestamp with time zone", true, ""},
			{"consecutive_failures", "integer", false, "0"},
			{"last_delivered_seq", "bigint", false, "0"},
			{"disabled_at", "timestamp with time zone", true, ""},
			{"created_by", "uuid", false, ""},
			{"created_at", "timestamp with time zone", false, ""},
			{"updated_at", "timestamp with time zone", false, ""},
			// 00044: the lease of the attempt in flight (ADR 0069).
			{"lease_delivery_id", "uuid", true, ""},
			{"lease_until", "timestamp with time zone", true, ""},
			// 00056: the rate limit and its window (ADR 0081).
			{"max_per_second", "integer", true, ""},
			{"rate_window", "timestamp with time zone[]", false, "'{}'::timestamp with time zone[]"},
			{"wake_up_at", "timestamp with time zone", true, ""},
		}, columns(t, db.Owner, "webhook_subscriptions"))
	})

	t.Run("webhook_deliveries columns", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, []column{
			{"id", "uuid", false, ""},
			{"subscription_id", "uuid", false, ""},
			{"event_seq", "bigint", false, ""},
			{"event_id", "uuid", false, ""},
			{"status", "text", false, ""},
			{"attempt", "integer", false, "0"},
			{"next_attempt_at", "timestamp with time zone", true, ""},
			{"last_error", "text", true, ""},
			{"response_code", "integer", true, ""},
			{"delivered_at", "timestamp with time zone", true, ""},
			{"created_at", "timestamp with time zone", false, ""},
			{"updated_at", "timestamp with time zone", false, ""},
			// 00043: the rest of the event's key in the log (ADR 0068).
			{"event_occurred_at", "timestamp with time zone", false, ""},
			// 00052: when the status left pending (the retention purge).
			{"finished_at", "timestamp with time zone", true, ""},
		}, columns(t, db.Owner, "webhook_deliveries"))
	})

	t.Run("checks", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, map[string]string{
			"webhook_subscriptions_url_check":                  "CHECK ((url ~~ 'https://%'::text))",
			"webhook_subscriptions_event_types_check":          "CHECK (((cardinality(event_types) >= 1) AND (array_position(event_types, NULL::text) IS NULL)))",
			"webhook_subscriptions_state_check":                "CHECK ((state = ANY (ARRAY['active'::text, 'paused'::text, 'disabled'::text])))",
			"webhook_subscriptions_hmac_generation_check":      "CHECK ((hmac_generation >= 0))",
			"webhook_subscriptions_consecutive_failures_check": "CHECK ((consecutive_failures >= 0))",
			"webhook_subscriptions_last_delivered_seq_check":   "CHECK ((last_delivered_seq >= 0))",
			"webhook_subscriptions_one_target":                 "CHECK (((app_installation_id IS NULL) <> (agent_id IS NULL)))",
			"webhook_subscriptions_hmac_generation":            "CHECK ((hmac_enabled OR (hmac_generation = 0)))",
			"webhook_subscriptions_disabled_at_by_state":       "CHECK (((state = 'disabled'::text) = (disabled_at IS NOT NULL)))",
			"webhook_subscriptions_lease_complete":             "CHECK (((lease_delivery_id IS NULL) = (lease_until IS NULL)))",
			"webhook_subscriptions_max_per_second_positive":    "CHECK (((max_per_second IS NULL) OR (max_per_second > 0)))",
		}, constraints(t, db.Owner, "webhook_subscriptions", "c"))
		require.Equal(t, map[string]string{
			"webhook_deliveries_status_check":  "CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text, 'dead'::text])))",
			"webhook_deliveries_attempt_check": "CHECK ((attempt >= 0))",
			"webhook_deliveries_last_error_check": "CHECK ((last_error = ANY (ARRAY['timeout'::text, 'connection_failed'::text, " +
				"'tls_failed'::text, 'address_blocked'::text, 'host_not_allowed'::text, 'http_status'::text, 'throttled'::text, " +
				"'gone'::text, 'not_authorized'::text, 'not_subscribed'::text, 'event_expired'::text, 'internal_error'::text])))",
			"webhook_deliveries_response_code_check":    "CHECK (((response_code >= 100) AND (response_code <= 599)))",
			"webhook_deliveries_next_attempt_by_status": "CHECK (((status = 'pending'::text) = (next_attempt_at IS NOT NULL)))",
			"webhook_deliveries_delivered_at_by_status": "CHECK (((status = 'succeeded'::text) = (delivered_at IS NOT NULL)))",
		}, constraints(t, db.Owner, "webhook_deliveries", "c"))
	})

	t.Run("foreign keys, primary and unique keys", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, map[string]string{
			"webhook_subscriptions_app_installation_id_fkey": "FOREIGN KEY (app_installation_id) REFERENCES app_installations(id) ON DELETE CASCADE",
			"webhook_subscriptions_agent_id_fkey":            "FOREIGN KEY (agent_id) REFERENCES agents(principal_id) ON DELETE CASCADE",
			"webhook_subscriptions_created_by_fkey":          "FOREIGN KEY (created_by) REFERENCES principals(id)",
		}, constraints(t, db.Owner, "webhook_subscriptions", "f"))
		require.Equal(t, map[string]string{
			"webhook_deliveries_subscription_id_fkey": "FOREIGN KEY (subscription_id) REFERENCES webhook_subscriptions(id) ON DELETE CASCADE",
		}, constraints(t, db.Owner, "webhook_deliveries", "f"))
		require.Equal(t, map[string]string{"webhook_subscriptions_pkey": "PRIMARY KEY (id)"},
			constraints(t, db.Owner, "webhook_subscriptions", "p"))
		require.Equal(t, map[string]string{"webhook_deliveries_pkey": "PRIMARY KEY (id)"},
			constraints(t, db.Owner, "webhook_deliveries", "p"))
		require.Empty(t, constraints(t, db.Owner, "webhook_subscriptions", "u"))
		require.Equal(t, map[string]string{"webhook_deliveries_subscription_event_key": "UNIQUE (subscription_id, event_seq)"},
			constraints(t, db.Owner, "webhook_deliveries", "u"))
	})

	t.Run("indexes", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, map[string]string{
			"webhook_subscriptions_pkey":      "CREATE UNIQUE INDEX webhook_subscriptions_pkey ON public.webhook_subscriptions USING btree (id)",
			"webhook_subscriptions_state_idx": "CREATE INDEX webhook_subscriptions_state_idx ON public.webhook_subscriptions USING btree (state)",
			"webhook_subscriptions_agent_idx": "CREATE INDEX webhook_subscriptions_agent_idx ON public.webhook_subscriptions USING btree (agent_id) WHERE (agent_id IS NOT NULL)",
			"webhook_subscriptions_installation_idx": "CREATE INDEX webhook_subscriptions_installation_idx ON public.webhook_subscriptions " +
				"USING btree (app_installation_id) WHERE (app_installation_id IS NOT NULL)",
			// Migration 00042: the candidates of a consumer round.
			"webhook_subscriptions_candidates_idx": "CREATE INDEX webhook_subscriptions_candidates_idx ON public.webhook_subscriptions " +
				"USING gin (event_types) WHERE ((state = ANY (ARRAY['active'::text, 'paused'::text])) AND (app_installation_id IS NOT NULL))",
		}, indexes(t, db.Owner, "webhook_subscriptions"))
		require.Equal(t, map[string]string{
			"webhook_deliveries_pkey": "CREATE UNIQUE INDEX webhook_deliveries_pkey ON public.webhook_deliveries USING btree (id)",
			"webhook_deliveries_subscription_event_key": "CREATE UNIQUE INDEX webhook_deliveries_subscription_event_key " +
				"ON public.webhook_deliveries USING btree (subscription_id, event_seq)",
			"webhook_deliveries_head_idx": "CREATE INDEX webhook_deliveries_head_idx ON public.webhook_deliveries " +
				"USING btree (subscription_id, event_seq) WHERE (status = 'pending'::text)",
			// Migrations 00051 and 00052: the retention purge, on a column
			// no claim or retry writes (D-M2-26-45).
			"webhook_deliveries_finished_idx": "CREATE INDEX webhook_deliveries_finished_idx ON public.webhook_deliveries " +
				"USING btree (finished_at) WHERE (finished_at IS NOT NULL)",
		}, indexes(t, db.Owner, "webhook_deliveries"))
	})

	t.Run("bothy_app reads and writes, owns nothing", func(t *testing.T) {
		t.Parallel()
		for _, table := range []string{"webhook_subscriptions", "webhook_deliveries"} {
			var sel, ins, upd, del, trunc, refs, trig bool
			var owner string
			require.NoError(t, db.Owner.QueryRow(ctx, `
				SELECT has_table_privilege('bothy_app', $1::regclass, 'SELECT'),
				       has_table_privilege('bothy_app', $1::regclass, 'INSERT'),
				       has_table_privilege('bothy_app', $1::regclass, 'UPDATE'),
				       has_table_privilege('bothy_app', $1::regclass, 'DELETE'),
				       has_table_privilege('bothy_app', $1::regclass, 'TRUNCATE'),
				       has_table_privilege('bothy_app', $1::regclass, 'REFERENCES'),
				       has_table_privilege('bothy_app', $1::regclass, 'TRIGGER'),
				       pg_get_userbyid(relowner)
				FROM pg_class WHERE oid = $1::regclass`, table).Scan(&sel, &ins, &upd, &del, &trunc, &refs, &trig, &owner))
			require.True(t, sel && ins && upd && del, table)
			require.False(t, trunc || refs || trig, "%s: DML only", table)
			require.NotEqual(t, "bothy_app", owner, table)
		}
	})

	t.Run("the exclusivity checks refuse rows with 23514", func(t *testing.T) {
		t.Parallel()
		principal, installation, agent := ids.New(), ids.New(), ids.New()
		app, appPrincipal := ids.New(), ids.New()
		_, err := db.App.Exec(ctx, `
			INSERT INTO principals (id, kind, display_name, created_at) VALUES
				($1, 'person', 'Robin', now()), ($2, 'app', 'Tracker', now()), ($3, 'agent', 'Helper', now())`,
			principal, appPrincipal, agent)
		require.NoError(t, err)
		_, err = db.App.Exec(ctx, `INSERT INTO agents (principal_id, created_at) VALUES ($1, now())`, agent)
		require.NoError(t, err)
		_, err = db.App.Exec(ctx, `INSERT INTO apps (id, principal_id, name, manifest, created_by, created_at, updated_at)
			VALUES ($1, $2, 'Tracker', '{}', $3, now(), now())`, app, appPrincipal, principal)
		require.NoError(t, err)
		_, err = db.App.Exec(ctx, `INSERT INTO app_installations (id, app_id, state, granted_scopes, event_subscriptions,
			installed_by, installed_at, updated_at) VALUES ($1, $2, 'active', '{}', '{}', $3, now(), now())`, installation, app, principal)
		require.NoError(t, err)

		insert := func(installationID, agentID ids.ID, hmacEnabled bool, generation int) error {
			_, err := db.App.Exec(ctx, `
				INSERT INTO webhook_subscriptions (id, app_installation_id, agent_id, url, event_types, state,
					signing_key_kid, hmac_enabled, hmac_generation, created_by, created_at, updated_at)
				VALUES ($1, $2, $3, 'https://hooks.example.com/bothy/events', '{message.created}', 'active',
					'kid-1', $4, $5, $6, now(), now())`,
				ids.New(), installationID, agentID, hmacEnabled, generation, principal)
			return err
		}
		refused := func(err error, constraint string) {
			t.Helper()
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr), "%v", err)
			require.Equal(t, "23514", pgErr.Code)
			require.Equal(t, constraint, pgErr.ConstraintName)
		}
		refused(insert(installation, agent, false, 0), "webhook_subscriptions_one_target")
		refused(insert(ids.Zero, ids.Zero, false, 0), "webhook_subscriptions_one_target")
		refused(insert(installation, ids.Zero, false, 1), "webhook_subscriptions_hmac_generation")
		require.NoError(t, insert(installation, ids.Zero, true, 1))
		require.NoError(t, insert(ids.Zero, agent, false, 0))
	})
}
