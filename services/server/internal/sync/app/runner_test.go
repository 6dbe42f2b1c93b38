package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg/pgtest"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres"
	"bothy/server/internal/sync/app"
)

type nopHandler struct{}

func (nopHandler) HandleEvent(context.Context, eventsync.Event) error { return nil }

// run starts r.Run in the background and returns a function that stops it
// and waits for it to return.
func run(t testing.TB, r *app.Runner) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(t, r.Run(ctx)) })
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// TestNotifyWakesARunningRunner: with a poll interval far beyond the test's
// deadline, only the NOTIFY of the append can wake the runner.
func TestNotifyWakesARunningRunner(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := newSignalling()
	run(t, b.runner(t, h, app.Options{BatchSize: 10, PollInterval: time.Hour}))
	first := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, first) // the runner is listening now
	second := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, second)
}

// TestABusyRoundLetsTheNextOneGather: after a round that handled at
// least consumer.gather_min_events events the runner pauses
// consumer.gather_pause before it looks again, so the events posted
// meanwhile go into one round (here the pause outlasts the test: the
// third event waits); a smaller round does not pause, and the runner
// stops during a pause when its context ends.
func TestABusyRoundLetsTheNextOneGather(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		minEvents int
		waits     bool
	}{
		{"a round of two pauses at a minimum of two", 2, true},
		{"a round of two goes on at a minimum of three", 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			h := newSignalling()
			first := b.appendMessages(t, 2)
			stop := run(t, b.runner(t, h, app.Options{BatchSize: 10, PollInterval: time.Hour,
				GatherPause: time.Hour, GatherMinEvents: tc.minEvents}))
			waitFor(t, h.ch, first[1]) // one round handled both
			third := b.appendMessages(t, 1)[0]
			if !tc.waits {
				waitFor(t, h.ch, third)
				return
			}
			select {
			case seq := <-h.ch:
				t.Fatalf("seq %d was handled during the pause", seq)
			case <-time.After(500 * time.Millisecond):
			}
			stop() // returns although the pause has most of an hour to go
			require.NotContains(t, h.handled(), third)
		})
	}
}

// TestSecondRunnerTakesOverWhenTheFirstStops: two processes (two
// coordinators with their own connections) run the same consumer; only the
// first handles events while it holds the consumer; once it stops (its
// connection closes) the second continues after the cursor, without loss
// and without handling anything twice.
func TestSecondRunnerTakesOverWhenTheFirstStops(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := app.Options{BatchSize: 10, PollInterval: 20 * time.Millisecond}
	ha, hb := newSignalling(), newSignalling()

	depsA := b.deps
	depsA.Coordinator = b.sessions(t, o.PollInterval)
	ra, err := app.NewRunner(consumer, ha, depsA, o)
	require.NoError(t, err)
	stopA := run(t, ra)
	seqs := b.appendMessages(t, 1)
	waitFor(t, ha.ch, seqs[0])

	depsB := b.deps
	depsB.Coordinator = b.sessions(t, o.PollInterval)
	rb, err := app.NewRunner(consumer, hb, depsB, o)
	require.NoError(t, err)
	run(t, rb)
	seqs = append(seqs, b.appendMessages(t, 2)...)
	waitFor(t, ha.ch, seqs[2])

	stopA()
	seqs = append(seqs, b.appendMessages(t, 2)...)
	waitFor(t, hb.ch, seqs[4])

	require.Equal(t, seqs[:3], ha.handled(), "A handled everything while it held the consumer")
	require.Equal(t, seqs[3:], hb.handled(), "B continued after A's cursor")
}

// TestRunnerSurvivesAKilledSession: the connection holding the consumer is
// terminated by the server (a crashed process looks the same to
// PostgreSQL); one of the two runners takes the consumer and every event is
// handled exactly once, in order.
func TestRunnerSurvivesAKilledSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	o := app.Options{BatchSize: 10, PollInterval: 20 * time.Millisecond}
	h := newSignalling()
	for range 2 {
		deps := b.deps
		deps.Coordinator = b.sessions(t, o.PollInterval)
		r, err := app.NewRunner(consumer, h, deps, o)
		require.NoError(t, err)
		run(t, r)
	}
	seqs := b.appendMessages(t, 1)
	waitFor(t, h.ch, seqs[0])

	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.AdminURL(t))
	require.NoError(t, err)
	defer admin.Close(ctx)
	var killed bool
	require.NoError(t, admin.QueryRow(ctx, `
		SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::bigint::oid AND d.datname = $2`,
		postgres.LockClassConsumer, b.db.Name).Scan(&killed))
	require.True(t, killed)

	seqs = append(seqs, b.appendMessages(t, 3)...)
	waitFor(t, h.ch, seqs[3])
	require.Equal(t, seqs, h.handled())
}

func TestConsumersRegisterAndStart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, err := app.NewConsumers(b.deps, app.Options{BatchSize: 10, PollInterval: time.Hour})
	require.NoError(t, err)
	h := newSignalling()
	require.NoError(t, c.Register(consumer, h))
	require.ErrorIs(t, c.Register(consumer, h), app.ErrConsumerRegistered)
	require.ErrorIs(t, c.Register("", h), app.ErrConsumerInvalid)
	require.ErrorIs(t, c.Register("other", nil), app.ErrConsumerInvalid)
	r, ok := c.Runner(consumer)
	require.True(t, ok)
	require.NotNil(t, r)

	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(c.Stop)
	require.ErrorIs(t, c.Register("late", h), app.ErrConsumersStarted)
	require.ErrorIs(t, c.Start(context.Background()), app.ErrConsumersStarted)

	seq := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, seq)
	c.Stop()
	c.Stop() // idempotent
}

func TestNewRunnerAndConsumersRefuseBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, o := range map[string]app.Options{
		"no batch size":                    {PollInterval: time.Second},
		"no poll interval":                 {BatchSize: 1},
		"a negative gather pause":          {BatchSize: 1, PollInterval: time.Second, GatherPause: -time.Millisecond},
		"a gather pause without a minimum": {BatchSize: 1, PollInterval: time.Second, GatherPause: time.Millisecond},
	} {
		_, err := app.NewRunner(consumer, nopHandler{}, b.deps, o)
		require.Error(t, err, name)
		_, err = app.NewConsumers(b.deps, o)
		require.Error(t, err, name)
	}
	_, err := app.NewRunner(consumer, nil, b.deps, defaultOptions)
	require.Error(t, err)
	_, err = app.NewRunner("", nopHandler{}, b.deps, defaultOptions)
	require.Error(t, err)
	deps := b.deps
	deps.Cursors = nil
	_, err = app.NewRunner(consumer, nopHandler{}, deps, defaultOptions)
	require.Error(t, err)
}

// TestARunnerFindsItsCursorMovedAndReadsFromThere (D-SY-22): a runner
// that knows where its last round left the cursor confirms it with the
// cursor's lock; when the cursor was moved meanwhile (here back, as an
// operator's replay would), that round ends without handling anything
// and the next one reads the cursor: the events after it are handled
// again, none skipped.
func TestARunnerFindsItsCursorMovedAndReadsFromThere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := newSignalling()
	run(t, b.runner(t, h, defaultOptions))
	seqs := b.appendMessages(t, 3)
	waitFor(t, h.ch, seqs[2])
	b.waitForCursor(t, seqs[2])

	_, err := b.db.App.Exec(context.Background(), `UPDATE consumer_cursors SET last_seq = $1 WHERE name = $2`, seqs[0], string(consumer))
	require.NoError(t, err)
	fourth := b.appendMessages(t, 1)[0]
	waitFor(t, h.ch, fourth)
	handled := h.handled()
	require.Equal(t, []int64{seqs[1], seqs[2], fourth}, handled[len(handled)-3:],
		"the events after the moved cursor are handled again, in order, before the new one")
	b.waitForCursor(t, fourth)
}
