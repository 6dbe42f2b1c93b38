package pg

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/watched"
	"bothy/server/internal/platform/otel"
)

// ChangesChannel is the channel the trigger of migration 00064 notifies
// for every change of a fact the processes keep in memory (token owners,
// a person's standing, channels): the ID the fact is about, or an empty
// payload for every ID.
const ChangesChannel = "bothy_changes"

// WatchChanges reports the changes of watched facts to events until ctx
// ends (ADR 0102, ADR 0103). It holds a connection of its own, outside the
// pool (same URL, role and parameters), that LISTENs on ChangesChannel: it
// calls events.Watching once the LISTEN holds, events.Changed or
// events.ChangedAll for each notification, and events.Lost when the
// connection ends; then it connects again after retry, until ctx ends
// (after a last events.Lost). Each end of the connection before ctx is
// logged at WARN. It panics on a nil pool, events or log, or a retry that
// is not positive (a wiring bug).
func WatchChanges(ctx context.Context, pool *pgxpool.Pool, events watched.Events, retry time.Duration, log *slog.Logger) {
	if pool == nil || events == nil || log == nil || retry <= 0 {
		panic("pg: WatchChanges needs a pool, events, a logger and a positive retry")
	}
	cfg := DedicatedConnConfig(pool)
	for {
		err := watchOnce(ctx, cfg, events)
		events.Lost()
		if ctx.Err() != nil {
			return
		}
		log.WarnContext(ctx, "pg: watching changes stopped; tokens, standings and channels are read from the database until it listens again",
			otel.ErrorAttr(err), slog.Duration("retry", retry))
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
	}
}

// watchOnce connects, listens and reports until the connection or ctx
// ends.
func watchOnce(ctx context.Context, cfg *pgx.ConnConfig, events watched.Events) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return err
	}
	defer CloseDedicated(conn)
	if err := listenForChanges(ctx, conn); err != nil {
		return err
	}
	events.Watching()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if id, err := ids.Parse(n.Payload); err == nil {
			events.Changed(id)
		} else {
			events.ChangedAll()
		}
	}
}

// listenForChanges subscribes conn to ChangesChannel. It is SQL written in
// Go: LISTEN is a utility statement whose channel is an identifier, not a
// parameter, so sqlc cannot express it.
func listenForChanges(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `LISTEN `+ChangesChannel)
	return err
}
