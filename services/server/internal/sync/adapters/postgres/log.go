package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/platform/pg"
	eventsync "bothy/server/internal/sync"
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

const eventColumns = `seq, id, type, resource_kind, resource_id, space_id, channel_id, thread_id,
	audience_principal_id, receive_action, actor_id, payload, truncated, occurred_at`

func scanEvent(row pgx.Row) (eventsync.Event, error) {
	var ev eventsync.Event
	var payload []byte
	err := row.Scan(&ev.Seq, &ev.ID, &ev.Type, &ev.ResourceKind, &ev.ResourceID, &ev.SpaceID,
		&ev.ChannelID, &ev.ThreadID, &ev.AudiencePrincipalID, &ev.ReceiveAction, &ev.ActorID,
		&payload, &ev.Truncated, &ev.OccurredAt)
	ev.Payload = payload
	ev.OccurredAt = ev.OccurredAt.UTC()
	return ev, err
}

// EventByKey implements sync.LogReader: the event with key, or false when
// it never existed, was dropped by retention or key.OccurredAt is not its
// occurred_at. The key names the partition, so the read touches one.
func (l *Log) EventByKey(ctx context.Context, key eventsync.EventKey) (eventsync.Event, bool, error) {
	ev, err := scanEvent(pg.Conn(ctx, l.pool).QueryRow(ctx,
		`SELECT `+eventColumns+` FROM event_log WHERE seq = $1 AND occurred_at = $2`, key.Seq, key.OccurredAt))
	if errors.Is(err, pgx.ErrNoRows) {
		return eventsync.Event{}, false, nil
	}
	if err != nil {
		return eventsync.Event{}, false, errs.Wrap(err, "sync: reading an event failed")
	}
	return ev, true, nil
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
	// occurred_at is stored in microseconds; a seq has one event.
	want := make(map[int64]int64, len(keys))
	seqs, times := make([]int64, len(keys)), make([]time.Time, len(keys))
	for i, k := range keys {
		want[k.Seq] = k.OccurredAt.UnixMicro()
		seqs[i], times[i] = k.Seq, k.OccurredAt
	}
	rows, err := pg.Conn(ctx, l.pool).Query(ctx,
		`SELECT seq, occurred_at, type FROM event_log WHERE occurred_at = ANY($2) AND seq = ANY($1)`, seqs, times)
	if err != nil {
		return nil, errs.Wrap(err, "sync: reading event types failed")
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var at time.Time
		var typ eventlog.Type
		if err := rows.Scan(&seq, &at, &typ); err != nil {
			return nil, errs.Wrap(err, "sync: reading event types failed")
		}
		if micro, ok := want[seq]; ok && micro == at.UnixMicro() {
			out[seq] = typ
		}
	}
	if err := rows.Err(); err != nil {
		return nil, errs.Wrap(err, "sync: reading event types failed")
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
	var seq int64
	if err := pg.Conn(ctx, l.pool).QueryRow(ctx, `SELECT dropped_through_seq + 1 FROM event_log_watermark`).Scan(&seq); err != nil {
		return 0, errs.Wrap(err, "sync: reading the retention watermark failed")
	}
	return seq, nil
}

// ReadAfter implements app.EventSource: up to limit events with seq > after
// in seq order.
func (l *Log) ReadAfter(ctx context.Context, after int64, limit int) ([]eventsync.Event, error) {
	rows, err := pg.Conn(ctx, l.pool).Query(ctx, `SELECT `+eventColumns+` FROM event_log WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, errs.Wrap(err, "sync: reading events failed")
	}
	defer rows.Close()
	var out []eventsync.Event
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return nil, errs.Wrap(err, "sync: reading events failed")
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, errs.Wrap(err, "sync: reading events failed")
	}
	return out, nil
}

// writersEndedBefore looks at the transactions of this database that hold
// an id, as pg_stat_activity shows them (a role sees the transactions of
// its own sessions, which are the ones that append). backend_xid is a
// 32-bit xid, so both sides are compared by age(), which measures from the
// same point within one statement; ages stay far below 2^31 here.
const writersEndedBefore = `
SELECT NOT EXISTS (
	SELECT 1 FROM pg_stat_activity
	WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL
	  AND age(backend_xid) >= age((($1::xid8)::text::numeric % 4294967296)::text::xid))`

// WritersEndedBefore implements app.EventSource. Only this database's
// transactions count: other databases of the cluster cannot take seqs of
// this log, and a long transaction there must not hold back its consumers.
func (l *Log) WritersEndedBefore(ctx context.Context, xid uint64) (bool, error) {
	var ended bool
	if err := pg.Conn(ctx, l.pool).QueryRow(ctx, writersEndedBefore, xid).Scan(&ended); err != nil {
		return false, errs.Wrap(err, "sync: looking at running writers failed")
	}
	return ended, nil
}

// HeadSeq implements app.EventSource: the highest committed seq, 0 for an
// empty log.
func (l *Log) HeadSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := pg.Conn(ctx, l.pool).QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM event_log`).Scan(&seq); err != nil {
		return 0, errs.Wrap(err, "sync: reading the head of the log failed")
	}
	return seq, nil
}
