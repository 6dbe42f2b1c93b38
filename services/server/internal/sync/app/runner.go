package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/domain"
)

// Options configure the consumer frame.
type Options struct {
	// BatchSize is consumer.batch_size: the most events one round reads and
	// handles in its transaction. At least 1.
	BatchSize int
	// PollInterval is consumer.poll_interval: how long an idle runner waits
	// for a NOTIFY before it looks at the log anyway, the pause after a
	// failed round, and how often a process waiting for a consumer held
	// elsewhere tries again. Positive.
	PollInterval time.Duration
	// GatherPause is consumer.gather_pause: how long the runner waits,
	// after a round that handled at least GatherMinEvents events and left
	// none to read, before it looks for more, so that the events appended
	// meanwhile go into one round (ADR 0095). 0 turns the pause off.
	GatherPause time.Duration
	// GatherMinEvents is consumer.gather_min_events: the events a round
	// handles that make the runner pause; at least 1 with a GatherPause.
	GatherMinEvents int
	// RecentWindow is sync.partition_interval: a round of Run that knows
	// its cursor reads only the partitions of the events stamped at most
	// this long before the last event its runner handled, unless the
	// round before it found a gap or read every partition longer than a
	// PollInterval ago (ADR 0105). 0 makes every round read every
	// partition.
	RecentWindow time.Duration
}

func (o Options) validate() error {
	if o.BatchSize < 1 {
		return errors.New("sync: consumer.batch_size must be at least 1")
	}
	if o.PollInterval <= 0 {
		return errors.New("sync: consumer.poll_interval must be positive")
	}
	if o.GatherPause < 0 {
		return errors.New("sync: consumer.gather_pause must not be negative")
	}
	if o.GatherPause > 0 && o.GatherMinEvents < 1 {
		return errors.New("sync: consumer.gather_min_events must be at least 1")
	}
	if o.RecentWindow < 0 {
		return errors.New("sync: the recent window must not be negative")
	}
	return nil
}

// Deps are the collaborators of the consumer frame.
type Deps struct {
	// UoW runs each round in one transaction.
	UoW txn.UnitOfWork
	// Events reads the log, Cursors keeps the cursors.
	Events  EventSource
	Cursors CursorStore
	// Coordinator gives one process at a time a consumer and wakes it.
	Coordinator Coordinator
	// Logger receives a debug record per round and the failures; nil
	// discards.
	Logger *slog.Logger
	// Meter provides bothy.consumer.lag and bothy.consumer.rounds; nil
	// records nothing.
	Meter metric.MeterProvider
}

func (d Deps) validate() error {
	if d.UoW == nil || d.Events == nil || d.Cursors == nil || d.Coordinator == nil {
		return errors.New("sync: the consumer frame needs a unit of work, an event source, a cursor store and a coordinator")
	}
	return nil
}

// Runner runs one consumer: rounds over the log after the consumer's
// cursor, started by NOTIFY or the poll, in the process that holds the
// consumer (Coordinator).
type Runner struct {
	name    eventsync.ConsumerName
	handler eventsync.ConsumerHandler
	loss    eventsync.ConsumerLossHandler // nil when the handler does not implement it
	ender   eventsync.ConsumerRoundEnder  // nil when the handler does not implement it
	deps    Deps
	opts    Options
	log     *slog.Logger
	lag     metric.Int64Gauge
	rounds  metric.Int64Counter
}

// NewRunner returns the runner of consumer name with handler h. A handler
// that also implements sync.ConsumerLossHandler learns about lost ranges,
// one that implements sync.ConsumerRoundEnder about the end of each round.
// It returns an error for an empty name, a nil handler, missing deps or
// invalid options.
func NewRunner(name eventsync.ConsumerName, h eventsync.ConsumerHandler, d Deps, o Options) (*Runner, error) {
	if name == "" || h == nil {
		return nil, ErrConsumerInvalid
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mp := d.Meter
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	lag, err := mp.Meter("bothy/server/internal/sync").Int64Gauge("bothy.consumer.lag",
		metric.WithUnit("{event}"),
		metric.WithDescription("Events in the log after the consumer's cursor at the end of its last round."))
	if err != nil {
		return nil, fmt.Errorf("sync: creating bothy.consumer.lag: %w", err)
	}
	rounds, err := newRoundCounter(mp)
	if err != nil {
		return nil, err
	}
	r := &Runner{name: name, handler: h, deps: d, opts: o, lag: lag, rounds: rounds,
		log: log.With(slog.String(string(attr.Consumer), string(name)))}
	r.loss, _ = h.(eventsync.ConsumerLossHandler)
	r.ender, _ = h.(eventsync.ConsumerRoundEnder)
	return r, nil
}

// RunRound runs exactly one round now, in the calling goroutine, and
// returns how many events it handled. It does not need the consumer's
// session: the cursor row lock serializes it with any concurrent round of
// the same consumer. Tests and tools use it; Run uses the same round.
//
// A round is one unit of work: read the cursor (and, when it keeps a
// horizon, whether the writers before it have ended), read up to
// consumer.batch_size events after it in seq order, lock the cursor (which
// gives the round its transaction id, after the read), read the retention
// watermark (events first, watermark second, so a drop between the two
// reads is never missed), plan with domain.PlanRound, decide with
// domain.Settle how far the events read may be handled (appends take no
// lock, so a lower seq may still be in flight: ADR 0070), call HandleLost
// once when events were lost and the handler implements
// sync.ConsumerLossHandler, call HandleEvent for each event it may handle,
// then EndRound when it handled any and the handler implements
// sync.ConsumerRoundEnder, store the cursor (and the horizon of a gap it
// stopped at), read the head of the log for the lag when the read of the
// log came back full (a shorter read saw the head, D-SY-26), commit. Any
// error rolls back all of it and is returned as is. The frame's own
// statements take three round trips (D-SY-17, D-SY-19): the cursor's read
// with BEGIN; the horizon's question, the read of the log, the cursor's
// lock and the watermark together, in that order; the cursor's write and
// the head with COMMIT. Run's rounds after its first take two: they know
// the cursor (D-SY-22).
func (r *Runner) RunRound(ctx context.Context) (handled int, err error) {
	res, err := r.round(ctx, nil, time.Time{})
	return res.handled, err
}

type roundResult struct {
	handled          int
	full             bool
	head             int64
	lostFrom, lostTo int64
	// left is the cursor as the round committed it; moved reports a round
	// that found the cursor elsewhere than known and rolled back.
	left  Cursor
	moved bool
	// gapped reports a read of the recent partitions that did not follow
	// the cursor one by one, so the next round reads every partition (ADR
	// 0105); lastAt is when the last event the
	// round handled was stamped, zero when it handled none.
	gapped bool
	lastAt time.Time
}

// errCursorMoved ends a round whose cursor lock found the cursor elsewhere
// than the runner knew it; the round rolls back, and the next one reads
// the cursor.
var errCursorMoved = errors.New("sync: the consumer's cursor moved")

// round runs one round (RunRound). known is the cursor as this runner's
// last round committed it, or nil to read it; a round that finds the
// cursor elsewhere than known rolls back and reports moved, with no error
// and uncounted. A non-zero recentFrom makes the round read the events
// stamped from then on alone (ADR 0105): it then handles them only as far
// as they follow the cursor (or a lost range) one by one, settles no gap,
// and reports gapped when it stopped short.
func (r *Runner) round(ctx context.Context, known *Cursor, recentFrom time.Time) (roundResult, error) {
	var res roundResult
	err := r.deps.UoW.Do(ctx, func(ctx context.Context) error {
		res = roundResult{}
		// The cursor is read without a lock, so that the round has no
		// transaction id before its read of the log. A consumer's first
		// round writes its cursor here, before the read, and so keeps no
		// horizon. A runner that knows where its last round left the
		// cursor saves the read and its round trip (D-SY-22); the lock
		// below confirms what it knew.
		var seen Cursor
		var created bool
		if known != nil {
			seen = *known
		} else {
			var err error
			if seen, created, err = r.deps.Cursors.ReadCursor(ctx, r.name); err != nil {
				return err
			}
		}
		// The question whether the stored horizon is settled, the read of
		// the log, the lock of the cursor and the read of the watermark do
		// not depend on one another's answers: they travel together in one
		// round trip (txn.Together, ADR 0085), and PostgreSQL runs them in
		// this order, each after the one before it ended, which is the
		// order every one of them needs:
		//   - the question before the read: a writer that ends after the
		//     question may have committed before the read, and the read
		//     sees it;
		//   - the read before the lock, so that the round's transaction
		//     id, which locking the cursor assigns, is younger than its
		//     read of the log (domain.Settle);
		//   - the events before the watermark (D-M2-26-36): partition
		//     maintenance may commit between two statements of the round,
		//     and it raises the watermark and drops the events below it at
		//     once. Read in this order, every event after the cursor is
		//     either among those read or below the watermark read
		//     afterwards, so it is handled or reported lost; read the other
		//     way round, a drop in between hid events from both.
		var (
			settled     bool
			read        []eventsync.Event
			cur         Cursor
			xid         uint64
			minRetained int64
		)
		err := txn.Together(ctx,
			func(ctx context.Context) (err error) {
				if seen.Horizon.XID != 0 {
					settled, err = r.deps.Events.WritersEndedBefore(ctx, seen.Horizon.XID)
				}
				return err
			},
			func(ctx context.Context) (err error) {
				if recentFrom.IsZero() {
					read, err = r.deps.Events.ReadAfter(ctx, seen.Seq, r.opts.BatchSize)
				} else {
					read, err = r.deps.Events.ReadRecentAfter(ctx, seen.Seq, recentFrom, r.opts.BatchSize)
				}
				return err
			},
			func(ctx context.Context) (err error) {
				cur, xid, err = r.deps.Cursors.LockCursor(ctx, r.name)
				return err
			},
			func(ctx context.Context) (err error) {
				minRetained, err = r.deps.Events.MinRetainedSeq(ctx)
				return err
			},
		)
		if err != nil {
			return err
		}
		if known != nil && cur != seen {
			// Someone else moved the cursor since this runner's last round
			// (an operator, a round of RunRound): the log was read after
			// the wrong seq, which may skip events after the cursor.
			return errCursorMoved
		}
		if created {
			xid = 0
		}
		if cur.Horizon != seen.Horizon {
			settled = false // a concurrent round stored another one
		}
		// A concurrent round of this consumer may have moved the cursor
		// between the read and the lock; what it handled is dropped here.
		events := read
		for len(events) > 0 && events[0].Seq <= cur.Seq {
			events = events[1:]
		}
		if len(events) > 0 {
			// What was read is handled, even if retention dropped it since.
			minRetained = min(minRetained, events[0].Seq)
		}
		plan, err := domain.PlanRound(cur.Seq, minRetained, r.opts.BatchSize)
		if err != nil {
			return err
		}
		seqs := make([]int64, len(events))
		for i, ev := range events {
			seqs[i] = ev.Seq
		}
		var settle domain.Settlement
		if recentFrom.IsZero() {
			settle = domain.Settle(plan.After, seqs, cur.Horizon, settled, xid)
		} else {
			// The read may have missed an event stamped before recentFrom,
			// so a gap here is no gap to settle: without a horizon and
			// without the round's xid, Settle goes as far as the events
			// follow the cursor (or the end of a lost range, which the
			// watermark tells whatever the read) and keeps nothing, and
			// the next round reads every partition. The runner reads
			// recently only with no horizon kept (serve).
			settle = domain.Settle(plan.After, seqs, domain.Horizon{}, false, 0)
			res.gapped = settle.Held
		}
		if plan.Lost() {
			res.lostFrom, res.lostTo = plan.LostFrom, plan.LostTo
			if r.loss != nil {
				if err := r.loss.HandleLost(ctx, plan.LostFrom, plan.LostTo); err != nil {
					return err
				}
			}
		}
		var last int64
		for _, ev := range events[:settle.Handle] {
			if err := r.handler.HandleEvent(ctx, ev); err != nil {
				return err
			}
			last, res.lastAt = ev.Seq, ev.OccurredAt
		}
		if r.ender != nil && settle.Handle > 0 {
			if err := r.ender.EndRound(ctx); err != nil {
				return err
			}
		}
		res.handled = settle.Handle
		readFull := len(read) == plan.Limit
		res.full = readFull && !settle.Held
		next := Cursor{Seq: plan.NextCursor(last, settle.Handle), Horizon: settle.Horizon}
		res.left = next
		// A read that came back short saw the end of the log: its last
		// event is the head for the lag, and the round reads none
		// (D-SY-26), which would cost a look into every partition of the
		// log. After a full read more may follow, so the head is read. The
		// cursor's write and that read go in one round trip with the
		// COMMIT (D-SY-19, ADR 0090).
		if len(read) > 0 {
			res.head = read[len(read)-1].Seq
		}
		return txn.Last(ctx,
			func(ctx context.Context) error {
				if next == cur {
					return nil
				}
				return r.deps.Cursors.SetCursor(ctx, r.name, next)
			},
			func(ctx context.Context) (err error) {
				if !readFull {
					return nil
				}
				res.head, err = r.deps.Events.HeadSeq(ctx)
				return err
			},
		)
	})
	if errors.Is(err, errCursorMoved) {
		return roundResult{moved: true}, nil
	}
	r.countRound(ctx, err)
	if err != nil {
		return roundResult{}, err
	}
	lag := max(res.head-res.left.Seq, 0)
	r.lag.Record(ctx, lag, metric.WithAttributes(attr.Consumer.String(string(r.name))))
	if res.lostTo > 0 {
		r.log.WarnContext(ctx, "consumer lost events to retention",
			slog.Int64(string(attr.EventSeq), res.lostFrom),
			slog.Int64(string(attr.Count), res.lostTo-res.lostFrom+1))
	}
	r.log.DebugContext(ctx, "consumer round finished",
		slog.Int(string(attr.Count), res.handled),
		slog.Int64(string(attr.EventSeq), res.left.Seq))
	return res, nil
}

// Run runs the consumer until ctx ends, then returns nil. It waits for the
// consumer's session (another process may hold it), then runs rounds
// while full batches come back, pauses consumer.gather_pause after a round
// of at least consumer.gather_min_events events (ADR 0095), waits for a
// NOTIFY or consumer.poll_interval, and starts again. After a failed round
// it logs the error type (never the message, which may carry handler
// data) and waits one poll interval before the next round. When the
// session's connection dies it stops starting rounds and waits for the
// session again, so a second process can take over; the cursor row lock
// keeps a round already running from overlapping one of the new holder. A
// round in progress when ctx ends is finished, not abandoned, so Run
// returns after its commit.
func (r *Runner) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		sess, err := r.deps.Coordinator.Acquire(ctx, r.name)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			r.log.WarnContext(ctx, "consumer session failed", otel.ErrorAttr(err))
			sleep(ctx, nil, r.opts.PollInterval)
			continue
		}
		r.log.InfoContext(ctx, "consumer session acquired")
		r.serve(ctx, sess)
		sess.Close()
	}
	return nil
}

// serve runs rounds while the session holds. While it holds the session no
// other runner moves the cursor, so each round after the first starts from
// where the one before left it (known, D-SY-22) instead of reading it; a
// failed round, or one that found the cursor moved, makes the next one
// read it.
func (r *Runner) serve(ctx context.Context, sess Session) {
	var known *Cursor
	// A round reads the recent partitions alone (ADR 0105) when the runner
	// knows its cursor with no horizon kept, knows when the last event it
	// handled was stamped, the round before found no gap, and a round read
	// every partition less than a PollInterval ago; so an event stamped
	// before the window waits at most about a PollInterval even when no
	// later event shows its gap.
	var lastAt, fullAt time.Time
	gapped := false
	for {
		for {
			select {
			case <-sess.Lost():
				r.log.WarnContext(ctx, "consumer session lost")
				return
			default:
			}
			if ctx.Err() != nil {
				return
			}
			// A round that started finishes even when ctx ends: its work
			// is short and transactional, and committing it spares the
			// next holder of the consumer from doing it again.
			var recentFrom time.Time
			if r.opts.RecentWindow > 0 && known != nil && known.Horizon == (domain.Horizon{}) && !gapped &&
				!lastAt.IsZero() && time.Since(fullAt) < r.opts.PollInterval {
				recentFrom = lastAt.Add(-r.opts.RecentWindow)
			}
			began := time.Now()
			res, err := r.round(context.WithoutCancel(ctx), known, recentFrom)
			known = nil
			if res.moved {
				continue
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				r.log.ErrorContext(ctx, "consumer round failed", otel.ErrorAttr(err))
				if !sleep(ctx, sess.Lost(), r.opts.PollInterval) {
					return
				}
				continue
			}
			known = &res.left
			if recentFrom.IsZero() {
				fullAt = began
			}
			if !res.lastAt.IsZero() {
				lastAt = res.lastAt
			}
			if gapped = res.gapped; gapped {
				continue // read every partition at once
			}
			if !res.full {
				// A busy round: events are arriving. Pausing before the
				// next look lets it take the events of the pause together,
				// whose round, statements and delivery runs cost about
				// what one event's do (ADR 0095). A quiet round's event is
				// alone and goes on at once, so at a low rate nothing waits.
				if r.opts.GatherPause > 0 && res.handled >= r.opts.GatherMinEvents &&
					!sleep(ctx, sess.Lost(), r.opts.GatherPause) {
					return
				}
				break
			}
		}
		t := time.NewTimer(r.opts.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-sess.Lost():
			t.Stop()
			r.log.WarnContext(ctx, "consumer session lost")
			return
		case <-sess.Notifications():
			t.Stop()
		case <-t.C:
		}
	}
}

// sleep waits d; it returns false when ctx ended or lost was closed first.
func sleep(ctx context.Context, lost <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-lost:
		return false
	case <-t.C:
		return true
	}
}
