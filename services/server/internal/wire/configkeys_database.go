package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

// databaseConfigKeys are the keys of the PostgreSQL connections and the unit
// of work.
func databaseConfigKeys() []config.Key {
	return []config.Key{
		{Name: "database.url", Kind: config.KindURL, Default: "postgres://bothy_app@127.0.0.1:5432/bothy?sslmode=disable", Schemes: []string{"postgres", "postgresql"}, HostInQuery: true, Secret: true, Chapter: chapter02,
			Doc: "Connection URL of the runtime role bothy_app; a password is better kept in database.password_ref than in the URL. Through a Unix socket, name its directory as the query parameter host: postgres://bothy_app@/bothy?host=/run/postgresql."},
		{Name: "database.password_ref", Kind: config.KindSecretRef, Default: "file:<secrets.dir>/database_app_password", Optional: true, Chapter: chapter02,
			Doc: "Reference to the password of bothy_app; empty connects with the URL as it is."},
		{Name: "database.migration_url", Kind: config.KindURL, Default: "postgres://bothy_owner@127.0.0.1:5432/bothy?sslmode=disable", Schemes: []string{"postgres", "postgresql"}, HostInQuery: true, Secret: true, Chapter: chapter02,
			Doc: "Connection URL of the migration owner role bothy_owner, used by `bothy migrate`; a Unix socket as in database.url."},
		{Name: "database.migration_password_ref", Kind: config.KindSecretRef, Default: "file:<secrets.dir>/database_owner_password", Optional: true, Chapter: chapter02,
			Doc: "Reference to the password of bothy_owner; empty connects with the URL as it is."},
		{Name: "database.max_conns", Kind: config.KindInt, Default: "10", Min: "1", Max: "1000", Unit: "connections", Chapter: chapter02,
			Doc: "Largest number of connections in the pool of one process."},
		{Name: "database.open_all_conns", Kind: config.KindBool, Default: "true", Chapter: chapter02,
			Doc: "Opens all database.max_conns connections of a process at its start, before it reports ready and starts its work, and again in the background when one closes, so a request or a delivery rarely waits for a connection to be made and to plan its statements (ADR 0096, D-RT-12); false opens each connection on first need."},
		{Name: "database.conn_max_lifetime", Kind: config.KindDuration, Default: "1h", Min: "1s", Max: "24h", Chapter: chapter02,
			Doc: "Age after which a connection of the pool is closed and, with database.open_all_conns, opened again in the background; each connection lives a random part of database.conn_lifetime_jitter longer."},
		{Name: "database.conn_lifetime_jitter", Kind: config.KindDuration, Default: "10m", Min: "0s", Max: "24h", Chapter: chapter02,
			Doc: "Longest random time a connection lives beyond database.conn_max_lifetime, so connections opened together at the start are renewed one at a time instead of all in the same moment (ADR 0097); 0s renews them together unless database.url sets pool_max_conn_lifetime_jitter."},
		{Name: "database.tx_retry_max", Kind: config.KindInt, Default: "3", Min: "0", Max: "10", Unit: "retries", Chapter: chapter02,
			Doc: "How often a unit of work runs again after a serialization failure or a deadlock."},
		{Name: "database.lock_timeout", Kind: config.KindDuration, Default: "5s", Min: "0s", MinExclusive: true, Max: "10m", Chapter: chapter02,
			Doc: "Longest wait for a lock inside a unit of work (SET LOCAL lock_timeout); a timeout fails the unit of work."},
		{Name: "database.statement_timeout", Kind: config.KindDuration, Default: "30s", Min: "0s", Max: "1h", Chapter: chapter02,
			Doc: "Longest run time of one statement; 0s keeps the database server's setting."},
		{Name: "database.watch_retry", Kind: config.KindDuration, Default: "1s", Min: "100ms", Max: "1m", Chapter: chapter02,
			Doc: "How long a process that serves the API waits before it listens for changes of the facts it keeps in memory (token owners, standings, channels; ADR 0103) again after its connection ended; meanwhile every one of them is read from the database."},
		{Name: "database.startup_wait", Kind: config.KindDuration, Default: "5m", Min: "0s", Max: "24h", Chapter: chapter02,
			Doc: "Longest time a role waits at start-up for PostgreSQL to answer, retrying with backoff while /readyz answers 503; 0s gives up after the first attempt."},
		{Name: "database.startup_backoff_initial", Kind: config.KindDuration, Default: "500ms", Min: "10ms", Max: "1m", Chapter: chapter02,
			Doc: "Wait after the first failed start-up attempt; every further wait doubles up to database.startup_backoff_max."},
		{Name: "database.startup_backoff_max", Kind: config.KindDuration, Default: "15s", Min: "10ms", Max: "10m", Chapter: chapter02,
			Doc: "Longest wait between two start-up attempts."},
	}
}

// DatabaseConfig holds the connection and transaction settings.
type DatabaseConfig struct {
	// URL is database.url (secret-bearing: never log it).
	URL string `config:"database.url"`
	// PasswordRef is database.password_ref, placeholders resolved.
	PasswordRef string `config:"database.password_ref"`
	// MigrationURL is database.migration_url (secret-bearing).
	MigrationURL string `config:"database.migration_url"`
	// MigrationPasswordRef is database.migration_password_ref.
	MigrationPasswordRef string `config:"database.migration_password_ref"`
	// MaxConns is database.max_conns.
	MaxConns int32 `config:"database.max_conns"`
	// OpenAllConns is database.open_all_conns.
	OpenAllConns bool `config:"database.open_all_conns"`
	// ConnMaxLifetime is database.conn_max_lifetime.
	ConnMaxLifetime time.Duration `config:"database.conn_max_lifetime"`
	// ConnLifetimeJitter is database.conn_lifetime_jitter.
	ConnLifetimeJitter time.Duration `config:"database.conn_lifetime_jitter"`
	// TxRetryMax is database.tx_retry_max.
	TxRetryMax int `config:"database.tx_retry_max"`
	// LockTimeout is database.lock_timeout.
	LockTimeout time.Duration `config:"database.lock_timeout"`
	// WatchRetry is database.watch_retry.
	WatchRetry time.Duration `config:"database.watch_retry"`
	// StatementTimeout is database.statement_timeout; 0 keeps the server's.
	StatementTimeout time.Duration `config:"database.statement_timeout"`
	// StartupWait is database.startup_wait.
	StartupWait time.Duration `config:"database.startup_wait"`
	// StartupBackoffInitial is database.startup_backoff_initial.
	StartupBackoffInitial time.Duration `config:"database.startup_backoff_initial"`
	// StartupBackoffMax is database.startup_backoff_max.
	StartupBackoffMax time.Duration `config:"database.startup_backoff_max"`
}
