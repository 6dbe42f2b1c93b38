package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/pg"
)

// NotifyChannel is the channel the trigger of migration 00062 notifies
// for every update, delete and truncate of people, sessions and
// personal_tokens: the person's principal ID, or an empty payload for
// every person.
const NotifyChannel = "bothy_credentials"

// WatchCredentials reports the changes of stored credentials to events
// until ctx ends (ADR 0102). It holds a connection of its own, outside the
// pool (same URL, role and parameters), that LISTENs on
// NotifyChannel: it calls events.Watching once the LISTEN holds,
// events.Changed or events.ChangedAll for each notification, and
// events.Lost when the connection ends; then it connects again after
// retry, until ctx ends (after a last events.Lost). Each end of the
// connection before ctx is logged at WARN. It panics on a nil pool, events or
// log, or a retry that is not positive (a wiring bug).
func WatchCredentials(ctx context.Context, pool *pgxpool.Pool, events app.CredentialEvents, retry time.Duration, log *slog.Logger) {
	if pool == nil || events == nil || log == nil || retry <= 0 {
		panic("identity: WatchCredentials needs a pool, events, a logger and a positive retry")
	}
	cfg := pg.DedicatedConnConfig(pool)
	for {
		err := watchOnce(ctx, cfg, events)
		events.Lost()
		if ctx.Err() != nil {
			return
		}
		log.WarnContext(ctx, "identity: watching credential changes stopped; tokens are looked up in the database until it listens again",
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
func watchOnce(ctx context.Context, cfg *pgx.ConnConfig, events app.CredentialEvents) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return err
	}
	defer pg.CloseDedicated(conn)
	if err := listenForCredentialChanges(ctx, conn); err != nil {
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

// listenForCredentialChanges subscribes conn to NotifyChannel. It is
// SQL written in Go (inline_sql, ADR 0078): LISTEN is a utility statement
// whose channel is an identifier, not a parameter, so sqlc cannot express
// it.
func listenForCredentialChanges(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `LISTEN `+NotifyChannel)
	return err
}
