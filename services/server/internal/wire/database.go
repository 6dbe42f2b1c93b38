package wire

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	appsdb "bothy/server/internal/apps/adapters/postgres/db"
	authzdb "bothy/server/internal/authz/adapters/postgres/db"
	chatdb "bothy/server/internal/chat/adapters/postgres/db"
	identitydb "bothy/server/internal/identity/adapters/postgres/db"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/secrets"
	syncdb "bothy/server/internal/sync/adapters/postgres/db"
)

// NewSecretsProvider returns the secret provider of cfg (secrets.cache_ttl).
func NewSecretsProvider(cfg *Config) (*secrets.Provider, error) {
	return secrets.NewProvider(secrets.Options{CacheTTL: cfg.Secrets.CacheTTL})
}

// OpenAppPool opens the runtime pool as bothy_app from database.url, with the
// password of database.password_ref when that file exists. applicationName
// shows in pg_stat_activity (for example "bothy-owner"). The pool has
// answered one ping and opens its connections on first need: the pool of a
// command that runs once.
func OpenAppPool(ctx context.Context, cfg *Config, sp *secrets.Provider, applicationName string) (*pgxpool.Pool, error) {
	return openAppPool(ctx, cfg, sp, applicationName, false)
}

// openAppPool is OpenAppPool; serving opens the pool of a server process:
// without the ping (the process waits for the database in Process.Run),
// with all its connections opened in the background when
// database.open_all_conns is true, and each new connection warmed with
// the statements of a post and of its delivery (hotStatements, ADR 0096).
func openAppPool(ctx context.Context, cfg *Config, sp *secrets.Provider, applicationName string, serving bool) (*pgxpool.Pool, error) {
	password, err := optionalSecret(ctx, sp, cfg.Database.PasswordRef)
	if err != nil {
		return nil, fmt.Errorf("database.password_ref: %w", err)
	}
	o := pg.Options{
		URL:              cfg.Database.URL,
		Password:         password,
		MaxConns:         cfg.Database.MaxConns,
		MaxLifetime:      cfg.Database.ConnMaxLifetime,
		LifetimeJitter:   cfg.Database.ConnLifetimeJitter,
		ApplicationName:  applicationName,
		StatementTimeout: cfg.Database.StatementTimeout,
	}
	if serving {
		o.Lazy = true
		o.Warm = hotStatements()
		if cfg.Database.OpenAllConns {
			o.MinConns = cfg.Database.MaxConns
		}
	}
	return pg.Open(ctx, o)
}

// hotStatements are the statements every role's new connection plans
// before its first use (pg.Warm, ADR 0096): those of a post (session,
// rights, channel, message, event, wake-up) and of its delivery (the
// consumer round, the routing, the claim and the record). Each module
// keeps its own list beside its queries; a role plans the other role's
// too, once per connection, which keeps one list for every role.
func hotStatements() []string {
	return slices.Concat(identitydb.HotStatements, authzdb.HotStatements, chatdb.HotStatements,
		syncdb.HotStatements, appsdb.HotStatements)
}

// OpenOwnerPool opens a small pool as the migration owner from
// database.migration_url and database.migration_password_ref.
func OpenOwnerPool(ctx context.Context, cfg *Config, sp *secrets.Provider) (*pgxpool.Pool, error) {
	password, err := optionalSecret(ctx, sp, cfg.Database.MigrationPasswordRef)
	if err != nil {
		return nil, fmt.Errorf("database.migration_password_ref: %w", err)
	}
	return pg.Open(ctx, pg.Options{URL: cfg.Database.MigrationURL, Password: password, MaxConns: 2, ApplicationName: "bothy-migrate"})
}

// BootstrapOptions returns the options of pg.Bootstrap for cfg: the database
// named in database.url and the role passwords of the two password
// references (empty when their files do not exist, for trust or peer
// authentication).
func BootstrapOptions(ctx context.Context, cfg *Config, sp *secrets.Provider, adminURL string) (pg.BootstrapOptions, error) {
	u, err := url.Parse(cfg.Database.URL)
	if err != nil {
		return pg.BootstrapOptions{}, errors.New("database.url does not parse")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return pg.BootstrapOptions{}, errors.New("database.url names no database")
	}
	owner, err := optionalSecret(ctx, sp, cfg.Database.MigrationPasswordRef)
	if err != nil {
		return pg.BootstrapOptions{}, fmt.Errorf("database.migration_password_ref: %w", err)
	}
	app, err := optionalSecret(ctx, sp, cfg.Database.PasswordRef)
	if err != nil {
		return pg.BootstrapOptions{}, fmt.Errorf("database.password_ref: %w", err)
	}
	return pg.BootstrapOptions{AdminURL: adminURL, Database: name, OwnerPassword: owner, AppPassword: app}, nil
}

// optionalSecret resolves ref; an empty reference or a missing file gives ""
// so that a password-less setup works without files.
func optionalSecret(ctx context.Context, sp *secrets.Provider, ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	s, err := sp.Resolve(ctx, ref)
	if errors.Is(err, secrets.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(s.Reveal()), nil
}
