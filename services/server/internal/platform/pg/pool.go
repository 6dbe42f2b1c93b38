// Package pg is the PostgreSQL platform: the connection pool, the unit of work
// (kernel/txn implemented over pgx), embedded migrations and the bootstrap of
// the database roles. Its pools send and read ids.ID as binary uuids
// (RegisterTypes, D-SQ-14).
//
// A server process's pool opens its connections in the background and has
// each new one plan the statements of its hottest paths before its first
// use (Options.MinConns, Options.Warm, Warm; ADR 0096), so no delivery
// waits for a backend's cold caches.
//
// Two roles exist (docs/adr/0007-migrations-and-database-roles.md): the
// migration owner, which owns every table and runs DDL, and bothy_app, which
// the server runs as and which may only read and write rows. Nothing at run
// time can change the schema.
package pg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configure a pool.
type Options struct {
	// URL is a postgres:// connection URL (database.url). A password inside
	// the URL is allowed but Password wins when set.
	URL string
	// Password is the resolved secret of database.password_ref, or "".
	Password string
	// MaxConns caps the pool (database.max_conns); 0 keeps pgx's default.
	MaxConns int32
	// MinConns are the connections the pool opens in the background from
	// the start and opens again when one closes (database.open_all_conns),
	// so a request rarely waits for a connection to be made and warmed; 0
	// opens each connection on first need.
	MinConns int32
	// MaxLifetime is the age after which a connection is closed
	// (database.conn_max_lifetime); 0 keeps pgx's (the URL's
	// pool_max_conn_lifetime, else an hour).
	MaxLifetime time.Duration
	// LifetimeJitter is the longest random time a connection lives beyond
	// MaxLifetime (database.conn_lifetime_jitter, ADR 0097): connections
	// opened together, as MinConns opens them, are then renewed one at a
	// time instead of all at once, each renewal a new backend to connect
	// and warm. 0 keeps pgx's (the URL's pool_max_conn_lifetime_jitter,
	// else none: they are renewed together).
	LifetimeJitter time.Duration
	// Warm are statements every new connection plans before the pool hands
	// it out (Warm, ADR 0096): the statements of the paths whose first
	// use should not pay for a cold backend. A statement that fails to
	// plan is skipped: the connection is still handed out.
	Warm []string
	// ApplicationName shows in pg_stat_activity, for example "bothy-worker".
	ApplicationName string
	// StatementTimeout bounds every statement (database.statement_timeout);
	// 0 leaves the server default.
	StatementTimeout time.Duration
	// Lazy skips the first ping, so Open succeeds while the database is
	// down; connections are made on first use. A server process sets it
	// and waits for the database itself (database.startup_wait), so its
	// operator listener can say why it is not ready.
	Lazy bool
}

// Open returns a pool that has answered one ping (none when o.Lazy), whose
// connections know the server's own types (RegisterTypes). It
// returns an error naming the host and port (never the password) when the
// database is unreachable.
func Open(ctx context.Context, o Options) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("pg: database.url does not parse as a PostgreSQL URL")
	}
	if o.Password != "" {
		cfg.ConnConfig.Password = o.Password
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.ApplicationName != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = o.ApplicationName
	}
	if o.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprintf("%d", o.StatementTimeout.Milliseconds())
	}
	cfg.MinConns = min(o.MinConns, cfg.MaxConns)
	if o.MaxLifetime > 0 {
		cfg.MaxConnLifetime = o.MaxLifetime
	}
	if o.LifetimeJitter > 0 {
		cfg.MaxConnLifetimeJitter = o.LifetimeJitter
	}
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if err := AfterConnect(ctx, conn); err != nil {
			return err
		}
		// A statement that does not plan fails at its real use too, with
		// its error where it belongs; the tests plan every list (ADR 0096).
		if err := Warm(ctx, conn, o.Warm); err != nil && ctx.Err() != nil {
			return err
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pg: creating pool for %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	if o.Lazy {
		return pool, nil
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pg: connecting to %s:%d as %s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.User, err)
	}
	return pool, nil
}
