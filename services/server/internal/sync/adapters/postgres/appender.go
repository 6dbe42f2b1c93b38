package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/sync/adapters/postgres/db"
	"bothy/server/internal/sync/domain"
)

// AppenderOptions configure the Appender.
type AppenderOptions struct {
	// PayloadTextMaxBytes is sync.payload_text_max_bytes: the most bytes
	// of one string in a payload; longer text is cut and the event marked
	// truncated (docs/spec/04-sync-protocol.md 2.2 rule 4). At least 1.
	PayloadTextMaxBytes int
}

// Appender implements kernel/eventlog.Appender over event_log.
type Appender struct {
	clock clock.Clock
	waker *Waker
	opts  AppenderOptions
}

var _ eventlog.Appender = (*Appender)(nil)

// wakeQueued is set once an append of a unit of work arranged the
// consumers' wake-up: one serves all its appends.
var wakeQueued = txn.NewKey[bool]("sync.wake_queued")

// wakeAfter arranges the consumers' wake-up after the unit of work of ctx
// commits. When no notification is on its way and the append is in a
// txn.Last, the notification follows the COMMIT in its round trip
// (pg.FollowCommit, ADR 0094): the unit of work is one round trip from
// its end, so the wake-ups that wait for it meanwhile wait at most that.
// Otherwise the Waker notifies once the unit of work committed (ADR 0091),
// sharing a notification with the other wake-ups on their way.
func (a *Appender) wakeAfter(ctx context.Context) {
	if a.waker.Carry() {
		if pg.FollowCommit(ctx, a.waker.Carried, func(ctx context.Context, q pg.DBTX) error {
			return db.New(q).EventLogWake(ctx, NotifyChannel)
		}) {
			return
		}
		a.waker.Carried(pg.ErrNotFollowed)
	}
	txn.AfterCommit(ctx, a.waker.Wake)
}

// NewAppender returns an appender stamping events with clk whose units of
// work wake the consumers once they committed, through waker (with their
// COMMIT when waker has no notification on its way, ADR 0094). It returns
// an error for a nil clock or waker or invalid options.
func NewAppender(clk clock.Clock, waker *Waker, o AppenderOptions) (*Appender, error) {
	if clk == nil || waker == nil {
		return nil, errors.New("sync: NewAppender needs a clock and a waker")
	}
	if o.PayloadTextMaxBytes < 1 {
		return nil, errors.New("sync: sync.payload_text_max_bytes must be at least 1")
	}
	return &Appender{clock: clk, waker: waker, opts: o}, nil
}

// Append implements eventlog.Appender: AppendAll of ev alone.
func (a *Appender) Append(ctx context.Context, ev eventlog.Event) (eventlog.Appended, error) {
	got, err := a.AppendAll(ctx, []eventlog.Event{ev})
	if err != nil {
		return eventlog.Appended{}, err
	}
	return got[0], nil
}

// AppendAll implements eventlog.Appender. It validates each event
// (domain.PrepareAppend), then, in the unit of work of ctx and with one
// statement (EventLogAppend) for all of them: makes sure the transaction
// has its id, allocates their seqs in the order of evs and inserts the
// rows. The appending transaction notifies nothing (ADR 0091): the unit
// of work's first append arranges the notification of NotifyChannel after
// its commit (wakeAfter).
//
// No lock orders the appends (ADR 0070): transactions commit in any order,
// so a consumer may see seq 8 while seq 7 is still in flight, and consumer
// rounds wait at such gaps until they are settled (sync/domain Settle). The
// rule needs the transaction's id to be assigned before the seq is taken,
// which the statement's CASE orders (D-SQ-21).
//
// occurred_at is the clock's time cut to microseconds (the precision of
// timestamptz), so the stored and the returned time are equal; the
// events of one call share it.
//
// Errors: ErrNoUnitOfWork outside a unit of work, the domain errors of
// PrepareAppend, ErrNoPartition when no partition covers the time, and
// internal errors from the database.
func (a *Appender) AppendAll(ctx context.Context, evs []eventlog.Event) ([]eventlog.Appended, error) {
	tx, err := pg.RequireTx(ctx)
	if err != nil {
		return nil, err
	}
	n := len(evs)
	if n == 0 {
		return nil, nil
	}
	at := clock.Stamp(a.clock)
	p := db.EventLogAppendParams{
		Ids: make([]ids.ID, n), Types: make([]string, n), ResourceKinds: make([]string, n), ResourceIds: make([]ids.ID, n),
		SpaceIds: make([]ids.ID, n), ChannelIds: make([]ids.ID, n), ThreadIds: make([]ids.ID, n),
		AudiencePrincipalIds: make([]ids.ID, n), ReceiveActions: make([]string, n), ActorIds: make([]ids.ID, n),
		Payloads: make([][]byte, n), Truncateds: make([]bool, n), OccurredAts: make([]time.Time, n),
		Ords: make([]int32, n),
	}
	for i, ev := range evs {
		prepared, err := domain.PrepareAppend(ev, a.opts.PayloadTextMaxBytes)
		if err != nil {
			return nil, err
		}
		p.Ids[i], p.Types[i], p.ResourceKinds[i], p.ResourceIds[i] = ids.New(), string(ev.Type),
			string(prepared.Info.ResourceKind), ev.ResourceID
		p.SpaceIds[i], p.ChannelIds[i], p.ThreadIds[i], p.AudiencePrincipalIds[i] = ev.SpaceID, ev.ChannelID,
			ev.ThreadID, ev.AudiencePrincipalID
		p.ReceiveActions[i], p.ActorIds[i], p.Payloads[i], p.Truncateds[i], p.OccurredAts[i] =
			string(prepared.Info.ReceiveAction), ev.ActorID, prepared.Payload, prepared.Truncated, at
		p.Ords[i] = int32(i + 1)
	}

	if _, queued := wakeQueued.GetOrSet(ctx, true); !queued {
		// Before the append's statement goes: in a txn.Last the COMMIT
		// travels with it.
		a.wakeAfter(ctx)
	}
	rows, err := db.New(tx).EventLogAppend(ctx, p)
	if err != nil {
		if missingPartition(err) {
			return nil, ErrNoPartition
		}
		return nil, errs.Wrap(err, "sync: appending the events failed")
	}
	seqs := make(map[ids.ID]int64, len(rows))
	for _, r := range rows {
		seqs[r.ID] = r.Seq
	}
	out := make([]eventlog.Appended, n)
	for i, id := range p.Ids {
		out[i] = eventlog.Appended{Seq: seqs[id], ID: id, OccurredAt: at}
	}
	return out, nil
}

// missingPartition reports PostgreSQL's "no partition of relation ... found
// for row" (23514 without a constraint name, unlike the table's checks).
func missingPartition(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23514" && pgErr.ConstraintName == "" &&
		strings.HasPrefix(pgErr.Message, "no partition of relation")
}
