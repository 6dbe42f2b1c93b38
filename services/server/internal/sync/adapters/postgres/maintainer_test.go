package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/sync/adapters/postgres"
)

type bounds struct{ lo, hi time.Time }

func partitions(t testing.TB, db *pgtest.DB) []bounds {
	t.Helper()
	rows, err := db.App.Query(context.Background(), `SELECT lower_bound, upper_bound FROM event_log_partitions()`)
	require.NoError(t, err)
	defer rows.Close()
	var out []bounds
	for rows.Next() {
		var b bounds
		require.NoError(t, rows.Scan(&b.lo, &b.hi))
		out = append(out, bounds{b.lo.UTC(), b.hi.UTC()})
	}
	require.NoError(t, rows.Err())
	return out
}

func TestMaintainerCreatesPartitionsAheadAndIsIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t) // ran once at start (09:30, ahead 2h)
	hour := func(h int) time.Time { return time.Date(2026, 11, 30, h, 0, 0, 0, time.UTC) }
	require.Equal(t, []bounds{{hour(9), hour(10)}, {hour(10), hour(11)}, {hour(11), hour(12)}}, partitions(t, b.db),
		"aligned hours covering [now, now + sync.partition_ahead]")

	r, err := b.maint.Run(context.Background(), b.clock.Now())
	require.NoError(t, err)
	require.Equal(t, postgres.MaintenanceResult{}, r, "a second run changes nothing")

	r, err = b.maint.Run(context.Background(), b.clock.Advance(time.Hour))
	require.NoError(t, err)
	require.Equal(t, postgres.MaintenanceResult{Created: 1}, r)
	require.Len(t, partitions(t, b.db), 4)
}

func TestMaintainerNeverOverlapsAfterTheIntervalChanged(t *testing.T) {
	t.Parallel()
	b := setup(t) // hourly partitions 09:00 to 12:00
	daily, err := postgres.NewMaintainer(b.db.App, postgres.MaintainerOptions{
		PartitionInterval: 24 * time.Hour, PartitionAhead: 24 * time.Hour, EventRetention: 48 * time.Hour,
	})
	require.NoError(t, err)
	_, err = daily.Run(context.Background(), b.clock.Now())
	require.NoError(t, err)
	got := partitions(t, b.db)
	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	require.Equal(t, []bounds{
		{day(30, 0), day(30, 9)}, // the uncovered head of the day
		{day(30, 9), day(30, 10)}, {day(30, 10), day(30, 11)}, {day(30, 11), day(30, 12)},
		{day(30, 12), day(31, 0)}, // the uncovered tail of the day
		{day(31, 0), time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)},
	}, got)
}

func TestMaintainerDropsExpiredPartitionsAndRaisesTheWatermark(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	first := b.appendMessage(t, "first")
	second := b.appendMessage(t, "second")
	b.clock.Advance(time.Hour)
	third := b.appendMessage(t, "third")

	min, err := b.log.MinRetainedSeq(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), min)

	// 09:00-10:00 expires once its upper bound is sync.event_retention old.
	r, err := b.maint.Run(ctx, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, 1, r.Dropped)
	for _, gone := range []eventlog.Appended{first, second} {
		_, ok, err := b.log.EventByKey(ctx, key(gone))
		require.NoError(t, err)
		require.False(t, ok, "seq %d was dropped", gone.Seq)
	}
	ev, ok, err := b.log.EventByKey(ctx, key(third))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, third.ID, ev.ID)
	min, err = b.log.MinRetainedSeq(ctx)
	require.NoError(t, err)
	require.Equal(t, second.Seq+1, min)

	// Everything expires: the log is empty and the watermark says where the
	// next event starts.
	_, err = b.maint.Run(ctx, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Zero(t, countEvents(t, b.db))
	min, err = b.log.MinRetainedSeq(ctx)
	require.NoError(t, err)
	require.Equal(t, third.Seq+1, min)
}

// TestMaintainerDropsStragglersBelowTheWatermark: an event whose occurred_at
// lies in a newer partition than an event with a higher seq (clocks of two
// processes, or a slow commit near a bound) is dropped with it, so the
// retained log stays exactly the events above the watermark.
func TestMaintainerDropsStragglersBelowTheWatermark(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.clock.Set(time.Date(2026, 11, 30, 10, 0, 1, 0, time.UTC))
	straggler := b.appendMessage(t, "later partition, lower seq")
	b.clock.Set(time.Date(2026, 11, 30, 9, 59, 59, 0, time.UTC))
	older := b.appendMessage(t, "older partition, higher seq")
	b.clock.Set(time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC))
	kept := b.appendMessage(t, "kept")

	_, err := b.maint.Run(ctx, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	for _, c := range []struct {
		ev   eventlog.Appended
		want bool
	}{{straggler, false}, {older, false}, {kept, true}} {
		_, ok, err := b.log.EventByKey(ctx, key(c.ev))
		require.NoError(t, err)
		require.Equal(t, c.want, ok, "seq %d", c.ev.Seq)
	}
	min, err := b.log.MinRetainedSeq(ctx)
	require.NoError(t, err)
	require.Equal(t, older.Seq+1, min)
}

func TestMaintenanceFunctionValidatesItsArguments(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	for _, tc := range []struct {
		name, args, code string
	}{
		{"a null time", `NULL, '1 hour', '1 hour', '1 day'`, "22004"},
		{"an infinite time", `'infinity', '1 hour', '1 hour', '1 day'`, "22023"},
		{"a zero interval", `now(), '0', '1 hour', '1 day'`, "22023"},
		{"a fractional interval", `now(), '1.5 seconds', '1 hour', '1 day'`, "22023"},
		{"a negative ahead", `now(), '1 hour', '-1 hour', '1 day'`, "22023"},
		{"a zero retention", `now(), '1 hour', '1 hour', '0'`, "22023"},
		{"too many partitions at once", `now(), '1 second', '1 hour', '1 day'`, "22023"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := db.App.Exec(context.Background(), `SELECT event_log_maintain_partitions(`+tc.args+`)`)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr)
			require.Equal(t, tc.code, pgErr.Code)
		})
	}
}

func TestNewMaintainerRefusesBadOptions(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	for name, o := range map[string]postgres.MaintainerOptions{
		"a sub-second interval": {PartitionInterval: time.Millisecond, PartitionAhead: time.Hour, EventRetention: time.Hour},
		"a fractional interval": {PartitionInterval: 1500 * time.Millisecond, PartitionAhead: time.Hour, EventRetention: time.Hour},
		"a negative ahead":      {PartitionInterval: time.Hour, PartitionAhead: -time.Hour, EventRetention: time.Hour},
		"no retention":          {PartitionInterval: time.Hour, PartitionAhead: time.Hour},
	} {
		_, err := postgres.NewMaintainer(db.App, o)
		require.Error(t, err, name)
	}
}

// TestPartitionMaintenanceIsTheOnlyDDL proves the shape ADR 0007 asks for:
// the function runs as its owner (SECURITY DEFINER) with a fixed
// search_path, only bothy_app may execute it, bothy_app cannot create a
// partition itself, and event_log has no default partition.
func TestPartitionMaintenanceIsTheOnlyDDL(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	for _, fn := range []string{"event_log_maintain_partitions(timestamptz, interval, interval, interval)", "event_log_partitions()"} {
		var owner string
		var config []string
		var appMay, publicMay bool
		require.NoError(t, db.Owner.QueryRow(ctx, `
			SELECT pg_get_userbyid(p.proowner), coalesce(p.proconfig, '{}'),
			       has_function_privilege('bothy_app', p.oid, 'EXECUTE'),
			       coalesce(bool_or(a.grantee = 0), false)
			FROM pg_proc p LEFT JOIN LATERAL aclexplode(p.proacl) a ON true
			WHERE p.oid = $1::regprocedure
			GROUP BY p.oid, p.proowner, p.proconfig`, fn).Scan(&owner, &config, &appMay, &publicMay))
		require.Equal(t, pg.OwnerRole, owner, fn)
		require.Contains(t, config, "search_path=public, pg_temp", fn)
		require.True(t, appMay, fn)
		require.False(t, publicMay, "PUBLIC may not execute %s", fn)
	}
	var definer bool
	require.NoError(t, db.Owner.QueryRow(ctx, `SELECT prosecdef FROM pg_proc WHERE oid = 'event_log_maintain_partitions(timestamptz, interval, interval, interval)'::regprocedure`).Scan(&definer))
	require.True(t, definer)

	_, err := db.App.Exec(ctx, `CREATE TABLE event_log_mine PARTITION OF event_log FOR VALUES FROM ('2026-01-01') TO ('2026-01-02')`)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "42501", pgErr.Code)

	var defaults int
	require.NoError(t, db.Owner.QueryRow(ctx, `SELECT count(*) FROM pg_partitioned_table WHERE partrelid = 'event_log'::regclass AND partdefid <> 0`).Scan(&defaults))
	require.Zero(t, defaults)
}

// TestMaintainersStartedTogetherNeverFail starts several maintainers at once
// on one fresh database, as api and worker roles do when they start
// together (issue 13 item 4): every run succeeds, the partitions are
// created exactly once and never overlap.
func TestMaintainersStartedTogetherNeverFail(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const processes = 8
	total := 0
	for round := range 3 {
		at := now.Add(time.Duration(round) * 12 * time.Hour)
		results := make(chan error, processes)
		created := make(chan int, processes)
		start := make(chan struct{})
		for range processes {
			m, err := postgres.NewMaintainer(db.App, postgres.MaintainerOptions{
				PartitionInterval: time.Hour, PartitionAhead: 12 * time.Hour, EventRetention: 48 * time.Hour,
			})
			require.NoError(t, err)
			go func() {
				<-start
				r, err := m.Run(context.Background(), at)
				created <- r.Created
				results <- err
			}()
		}
		close(start)
		for range processes {
			require.NoError(t, <-results, "round %d", round)
			total += <-created
		}
		parts := partitions(t, db)
		for i := 1; i < len(parts); i++ {
			require.Equal(t, parts[i-1].hi, parts[i].lo, "partitions are contiguous and never overlap")
		}
		require.Equal(t, len(parts), total, "every partition was created by exactly one run")
	}
}
