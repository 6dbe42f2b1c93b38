package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/platform/pg"
	eventsync "bothy/server/internal/sync"
	"bothy/server/internal/sync/adapters/postgres/db"
	"bothy/server/internal/sync/app"
)

// Log reads event_log. It implements sync.LogReader for other modules and
// app.EventSource for consumer rounds. Every query joins the unit of work of
// ctx when there is one (pg.Conn).
type Log struct {
	pool *pgxpool.Pool
}

var (
	_ eventsync.LogReader = (*Log)(nil)
	_ app.EventSource     = (*Log)(nil)
)

// NewLog returns a reader over pool. It panics on a nil pool (a wiring bug).
func NewLog(pool *pgxpool.Pool) *Log {
	if pool == nil {
		panic("sync: NewLog needs a pool")
	}
	return &Log{pool: pool}
}

// q returns the sqlc queries on the ambient unit of work of ctx, or on the
// pool.
func (l *Log) q(ctx context.Context) *db.Queries { return db.New(pg.Conn(ctx, l.pool)) }

// event converts a row of event_log.
func event(r db.EventLog) eventsync.Event {
	return eventsync.Event{
		Seq: r.Seq, ID: r.ID, Type: eventlog.Type(r.Type),
		ResourceKind: authorize.ResourceKind(r.ResourceKind), ResourceID: r.ResourceID,
		SpaceID: r.SpaceID, ChannelID: r.ChannelID, ThreadID: r.ThreadID,
		AudiencePrincipalID: r.AudiencePrincipalID, ReceiveAction: authorize.Action(r.ReceiveAction),
		ActorID: r.ActorID, Payload: r.Payload, Truncated: r.Truncated, OccurredAt: r.OccurredAt.UTC(),
	}
}

// EventByKey implements sync.LogReader: the event with key, or false when
// it never existed, was dropped by retention or key.OccurredAt is not its
// occurred_at. The key names the partition, so the read touches one.
func (l *Log) EventByKey(ctx context.Context, key eventsync.EventKey) (eventsync.Event, bool, error) {
	row, err := l.q(ctx).EventGetByKey(ctx, db.EventGetByKeyParams{Seq: key.Seq, OccurredAt: key.OccurredAt})
	if errors.Is(err, pgx.ErrNoRows) {
		return eventsync.Event{}, false, nil
	}
	if err != nil {
		return eventsync.Event{}, false, errs.Wrap(err, "sync: reading an event failed")
	}
	return event(row), true, nil
}

// EventsByKey implements sync.LogReader: each retained event among keys,
// read with one statement. event_log_events_by_keys reads every key by its
// seq together with its own occurred_at, so each read touches one
// partition and no row pairs the seq of one key with the time of another.
func (l *Log) EventsByKey(ctx context.Context, keys []eventsync.EventKey) (map[int64]eventsync.Event, error) {
	out := make(map[int64]eventsync.Event, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	_, seqs, times := keyColumns(keys)
	rows, err := l.q(ctx).EventListByKeys(ctx, db.EventListByKeysParams{OccurredAts: times, Seqs: seqs})
	if err != nil {
		return nil, errs.Wrap(err, "sync: reading events failed")
	}
	for _, r := range rows {
		out[r.Seq] = event(r)
	}
	return out, nil
}

// keyColumns returns the parameters of a read by keys: the seqs and
// occurred_ats of keys, and per seq the occurred_at in microseconds, the
// precision it is stored in, with which a read that matches seqs and
// times apart leaves out a row that pairs the seq of one key with the
// time of another (a seq has one event).
func keyColumns(keys []eventsync.EventKey) (want map[int64]int64, seqs []int64, times []time.Time) {
	want = make(map[int64]int64, len(keys))
	seqs, times = make([]int64, len(keys)), make([]time.Time, len(keys))
	for i, k := range keys {
		want[k.Seq] = k.OccurredAt.UnixMicro()
		seqs[i], times[i] = k.Seq, k.OccurredAt
	}
	return want, seqs, times
}

// EventTypesByKey implements sync.LogReader: the type of each retained
// event among keys, read with one statement that touches only the
// partitions of the keys' occurred_at. A row that matches a seq and an
// occurred_at of different keys is not one of the keys and is left out.
func (l *Log) EventTypesByKey(ctx context.Context, keys []eventsync.EventKey) (map[int64]eventlog.Type, error) {
	out := make(map[int64]eventlog.Type, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	want, seqs, times := keyColumns(keys)
	rows, err := l.q(ctx).EventTypeListByKeys(ctx, db.EventTypeListByKeysParams{OccurredAts: times, Seqs: seqs})
	if err != nil {
		return nil, errs.Wrap(err, "sync: reading event types failed")
	}
	for _, r := range rows {
		if micro, ok := want[r.Seq]; ok && micro == r.OccurredAt.UnixMicro() {
			out[r.Seq] = eventlog.Type(r.Type)
		}
	}
	return out, nil
}

// MinRetainedSeq implements sync.LogReader. It is one above the retention
// watermark (event_log_watermark.dropped_through_seq), which partition
// maintenance raises when it drops events: every committed event at or above
// it is in the log. It is not min(seq): a seq burnt by a rolled-back append
// is a gap that never held an event, not a loss. On an empty log it is the
// lowest seq the next append can get that a consumer must not skip.
func (l *Log) MinRetainedSeq(ctx context.Context) (int64, error) {
	seq, err := l.q(ctx).EventLogWatermarkMinRetainedSeq(ctx)
	if err != nil {
		return 0, errs.Wrap(err, "sync: reading the retention watermark failed")
	}
	return seq, nil
}

// ReadAfter implements app.EventSource: up to limit events with seq > after
// in seq order.
func (l *Log) ReadAfter(ctx context.Context, after int64, limit int) ([]eventsync.Event, error) {
	rows, err := l.q(ctx).EventListAfter(ctx, db.EventListAfterParams{After: after, MaxRows: int64(limit)})
	if err != nil {
		return nil, errs.Wrap(err, "sync: reading events failed")
	}
	return events(rows), nil
}

// events maps the rows of a read of the log; an empty read stays nil, as
// it was before the sqlc queries.
func events(rows []db.EventLog) []eventsync.Event {
	var out []eventsync.Event
	for _, r := range rows {
		out = append(out, event(r))
	}
	return out
}

// ReadRecentAfter implements app.EventSource: up to limit events with
// seq > after stamped at or after since, in seq order, read in those
// partitions alone (ADR 0105).
func (l *Log) ReadRecentAfter(ctx context.Context, after int64, since time.Time, limit int) ([]eventsync.Event, error) {
	rows, err := l.q(ctx).EventListRecentAfter(ctx, db.EventListRecentAfterParams{After: after, Since: since, MaxRows: int64(limit)})
	if err != nil {
		return nil, errs.Wrap(err, "sync: reading events failed")
	}
	return events(rows), nil
}

// WritersEndedBefore implements app.EventSource: whether no other
// transaction of this database with an id at or below xid still runs, as
// pg_stat_activity shows them (ActivityWritersEndedBefore). Only this
// database's transactions count: other databases of the cluster cannot
// take seqs of this log, and a long transaction there must not hold back
// its consumers.
func (l *Log) WritersEndedBefore(ctx context.Context, xid uint64) (bool, error) {
	ended, err := l.q(ctx).ActivityWritersEndedBefore(ctx, xid)
	if err != nil {
		return false, errs.Wrap(err, "sync: looking at running writers failed")
	}
	return ended, nil
}

// HeadSeq implements app.EventSource: the highest committed seq, 0 for an
// empty log.
func (l *Log) HeadSeq(ctx context.Context) (int64, error) {
	seq, err := l.q(ctx).EventHeadSeq(ctx)
	if err != nil {
		return 0, errs.Wrap(err, "sync: reading the head of the log failed")
	}
	return seq, nil
}
