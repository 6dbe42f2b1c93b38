package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/authztest"
	chatpg "bothy/server/internal/chat/adapters/postgres"
	"bothy/server/internal/chat/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	eventsync "bothy/server/internal/sync"
	syncpg "bothy/server/internal/sync/adapters/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// testOptions are small limits, so tests reach them with short texts; one
// group of gathered posts at a time, so every post after the first that a
// test holds waits in the queue.
var testOptions = app.Options{MessageMaxBytes: 32, NameMaxChars: 20, PageSizeDefault: 3, PageSizeMax: 5,
	PostGatherMax: 16, PostGatherGroups: 1}

type testBundle struct {
	db    *pgtest.DB
	clock *clock.Fake
	world authztest.World
	chat  *app.Service
	log   *syncpg.Log
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	return setupTraced(t, nil)
}

// setupTraced is setup with the service's statements going through a pool
// whose connections tracer sees (nil: the database's own pool).
func setupTraced(t testing.TB, tracer pgx.QueryTracer) *testBundle {
	t.Helper()
	return setupWith(t, tracer, nil)
}

// setupWith is setupTraced with testOptions changed by options (nil: as
// they are).
func setupWith(t testing.TB, tracer pgx.QueryTracer, options func(*app.Options)) *testBundle {
	t.Helper()
	db := pgtest.New(t)
	clk := clock.NewFake(start)
	o := testOptions
	if options != nil {
		options(&o)
	}
	svc, err := app.NewService(testDeps(t, db, tracer, clk), o)
	require.NoError(t, err)
	return &testBundle{db: db, clock: clk, world: authztest.BuildWorld(t, db, clk), chat: svc, log: syncpg.NewLog(db.App)}
}

// testDeps are the service's collaborators over db, its statements going
// through a pool whose connections tracer sees (nil: the database's own).
func testDeps(t testing.TB, db *pgtest.DB, tracer pgx.QueryTracer, clk *clock.Fake) app.Deps {
	t.Helper()
	pool := db.App
	if tracer != nil {
		pool = db.TracedApp(t, tracer, 0)
	}
	maint, err := syncpg.NewMaintainer(db.App, syncpg.MaintainerOptions{
		PartitionInterval: time.Hour, PartitionAhead: 48 * time.Hour, EventRetention: 7 * 24 * time.Hour})
	require.NoError(t, err)
	_, err = maint.Run(context.Background(), clk.Now())
	require.NoError(t, err)
	appender, err := syncpg.NewAppender(clk, syncpg.NewWaker(db.App, slog.New(slog.DiscardHandler), time.Second), syncpg.AppenderOptions{PayloadTextMaxBytes: 1024})
	require.NoError(t, err)
	return app.Deps{
		Store:      chatpg.NewStore(pool),
		UnitOfWork: pg.NewUnitOfWork(pool, 3, 5*time.Second),
		Authorizer: authztest.NewAuthorizer(t, db, clk, nil),
		Events:     appender,
		Audit:      auditpg.New(db.App, clk),
		Clock:      clk,
	}
}

// as returns a context acting as p.
func as(p actor.Principal) context.Context { return actor.With(context.Background(), p) }

// events returns every event of the log in seq order.
func (b *testBundle) events(t testing.TB) []eventsync.Event {
	t.Helper()
	evs, err := b.log.ReadAfter(context.Background(), 0, 1000)
	require.NoError(t, err)
	return evs
}

// count returns the number of rows of table (a constant name from the test).
func (b *testBundle) count(t testing.TB, table string) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n))
	return n
}

// payload decodes an event payload.
func payload(t testing.TB, ev eventsync.Event) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(ev.Payload, &m))
	return m
}

// requireProblem checks code, reason and pointers of err.
func requireProblem(t testing.TB, err error, code errs.Code, reason string, pointers ...string) {
	t.Helper()
	e, ok := errs.As(err)
	require.True(t, ok, "want *errs.Error, got %v", err)
	require.Equal(t, code, e.Code)
	require.Equal(t, reason, e.Reason)
	var got []string
	for _, f := range e.Fields {
		got = append(got, f.Pointer)
	}
	require.Equal(t, pointers, got)
}

// denials returns the denial entries of action.
func (b *testBundle) denials(t testing.TB, action string) []audittest.Row {
	t.Helper()
	return audittest.List(t, b.db.App, audittest.Filter{Action: action, Outcome: "deny"})
}
