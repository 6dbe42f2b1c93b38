package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres"
	"bothy/server/internal/sync/app"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var start = time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC)

const consumer eventsync.ConsumerName = "test_consumer"

type testBundle struct {
	db       *pgtest.DB
	clock    *clock.Fake
	uow      *pg.UnitOfWork
	appender *postgres.Appender
	maint    *postgres.Maintainer
	metrics  *sdkmetric.ManualReader
	deps     app.Deps
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	return setupPartitioned(t, postgres.MaintainerOptions{
		PartitionInterval: time.Hour, PartitionAhead: 2 * time.Hour, EventRetention: 24 * time.Hour,
	})
}

// setupPartitioned is setup with the event log's partitions made by a
// maintainer with options mo, run once at start.
func setupPartitioned(t testing.TB, mo postgres.MaintainerOptions) *testBundle {
	t.Helper()
	db := pgtest.New(t)
	clk := clock.NewFake(start)
	appender, err := postgres.NewAppender(clk, postgres.NewWaker(db.App, slog.New(slog.DiscardHandler), time.Second), postgres.AppenderOptions{PayloadTextMaxBytes: 1024})
	require.NoError(t, err)
	maint, err := postgres.NewMaintainer(db.App, mo)
	require.NoError(t, err)
	_, err = maint.Run(context.Background(), clk.Now())
	require.NoError(t, err)
	reader := sdkmetric.NewManualReader()
	uow := pg.NewUnitOfWork(db.App, 3, 5*time.Second)
	b := &testBundle{db: db, clock: clk, uow: uow, appender: appender, maint: maint, metrics: reader}
	b.deps = app.Deps{
		UoW:         uow,
		Events:      postgres.NewLog(db.App),
		Cursors:     postgres.NewCursors(db.App, clk),
		Coordinator: b.sessions(t, time.Hour),
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Meter:       sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	}
	// A table the handlers write to, so tests can see whether a handler's
	// writes were rolled back with its round.
	_, err = db.Owner.Exec(context.Background(), `CREATE TABLE handler_marks (seq bigint NOT NULL);
		GRANT SELECT, INSERT ON handler_marks TO bothy_app`)
	require.NoError(t, err)
	return b
}

// sessions returns a coordinator as one worker process would have it.
func (b *testBundle) sessions(t testing.TB, poll time.Duration) *postgres.Sessions {
	t.Helper()
	s, err := postgres.NewSessions(b.db.App, b.clock, postgres.SessionOptions{PollInterval: poll})
	require.NoError(t, err)
	return s
}

func (b *testBundle) runner(t testing.TB, h eventsync.ConsumerHandler, o app.Options) *app.Runner {
	t.Helper()
	r, err := app.NewRunner(consumer, h, b.deps, o)
	require.NoError(t, err)
	return r
}

var defaultOptions = app.Options{BatchSize: 100, PollInterval: time.Hour}

func (b *testBundle) appendMessages(t testing.TB, n int) []int64 {
	t.Helper()
	var seqs []int64
	for i := range n {
		require.NoError(t, b.uow.Do(context.Background(), func(ctx context.Context) error {
			got, err := b.appender.Append(ctx, message(fmt.Sprintf("message %d", i)))
			seqs = append(seqs, got.Seq)
			return err
		}))
	}
	return seqs
}

func message(text string) eventlog.Event {
	return eventlog.Event{Type: eventlog.MessageCreated, ResourceID: ids.New(), Payload: map[string]any{"text": text}}
}

func (b *testBundle) cursor(t testing.TB) int64 {
	t.Helper()
	var seq int64
	require.NoError(t, b.db.App.QueryRow(context.Background(), `SELECT last_seq FROM consumer_cursors WHERE name = $1`, string(consumer)).Scan(&seq))
	return seq
}

func (b *testBundle) marks(t testing.TB) []int64 {
	t.Helper()
	rows, err := b.db.App.Query(context.Background(), `SELECT seq FROM handler_marks ORDER BY seq`)
	require.NoError(t, err)
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var s int64
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// recorder is a ConsumerHandler that writes a mark row per event in the
// round's transaction and records what it was called with.
type recorder struct {
	pool   *pgtest.DB
	mu     sync.Mutex
	calls  []string
	seqs   []int64
	failAt int64 // HandleEvent fails at this seq, after writing its mark
	seen   chan int64
}

func newRecorder(db *pgtest.DB) *recorder {
	return &recorder{pool: db, seen: make(chan int64, 1000)}
}

var errHandler = fmt.Errorf("handler failed on purpose")

func (r *recorder) HandleEvent(ctx context.Context, ev eventsync.Event) error {
	if _, err := pg.Conn(ctx, r.pool.App).Exec(ctx, `INSERT INTO handler_marks VALUES ($1)`, ev.Seq); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("event %d", ev.Seq))
	if ev.Seq == r.failAt {
		return errHandler
	}
	r.seqs = append(r.seqs, ev.Seq)
	return nil
}

// committed is called by tests after a successful round: only then were the
// recorded seqs really handled.
func (r *recorder) snapshot() ([]string, []int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...), append([]int64(nil), r.seqs...)
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.seqs = nil, nil
}

// lossRecorder also implements sync.ConsumerLossHandler.
type lossRecorder struct {
	*recorder
	lostErr error
}

func (r *lossRecorder) HandleLost(ctx context.Context, from, to int64) error {
	if _, err := pg.Conn(ctx, r.pool.App).Exec(ctx, `INSERT INTO handler_marks VALUES ($1)`, -from); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("lost %d-%d", from, to))
	return r.lostErr
}

var _ eventsync.ConsumerLossHandler = (*lossRecorder)(nil)

// endRecorder also implements sync.ConsumerRoundEnder: EndRound writes a
// mark (0) in the round's transaction and records the call.
type endRecorder struct {
	*recorder
	endErr error
}

func (r *endRecorder) EndRound(ctx context.Context) error {
	if _, err := pg.Conn(ctx, r.pool.App).Exec(ctx, `INSERT INTO handler_marks VALUES (0)`); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "end")
	return r.endErr
}

var _ eventsync.ConsumerRoundEnder = (*endRecorder)(nil)

// signalling wraps a handler and reports each handled seq after the round
// that handled it committed... as far as a handler can tell: it reports
// from inside the round, so tests that use it wait for the cursor too.
type signalling struct {
	mu   sync.Mutex
	seqs []int64
	ch   chan int64
}

func newSignalling() *signalling { return &signalling{ch: make(chan int64, 1000)} }

func (s *signalling) HandleEvent(_ context.Context, ev eventsync.Event) error {
	s.mu.Lock()
	s.seqs = append(s.seqs, ev.Seq)
	s.mu.Unlock()
	s.ch <- ev.Seq
	return nil
}

func (s *signalling) handled() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.seqs...)
}

// waitFor receives from ch until it has seen want, failing after a generous
// deadline. The deadline only bounds a broken run; nothing asserts on time.
func waitFor(t testing.TB, ch <-chan int64, want int64) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case got := <-ch:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("seq %d was not handled", want)
		}
	}
}

// waitForCursor waits until the consumer's cursor is at seq: a round's
// handler sees an event before the round commits.
func (b *testBundle) waitForCursor(t testing.TB, seq int64) {
	t.Helper()
	// Not b.cursor: a failed require inside the condition, which
	// Eventually runs on a goroutine of its own, ends that goroutine and
	// not the test, so a cursor row not committed yet at the first look
	// made the wait last its whole minute.
	require.Eventually(t, func() bool {
		var got int64
		err := b.db.App.QueryRow(context.Background(), `SELECT last_seq FROM consumer_cursors WHERE name = $1`, string(consumer)).Scan(&got)
		return err == nil && got == seq
	}, 60*time.Second, 5*time.Millisecond, "the cursor never reached seq %d", seq)
}
