package wire

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/secrets"
)

// NewSecretsProvider returns the secret provider of cfg (secrets.cache_ttl).
func NewSecretsProvider(cfg *Config) (*secrets.Provider, error) {
	return secrets.NewProvider(secrets.Options{CacheTTL: cfg.Secrets.CacheTTL})
}

// OpenAppPool opens the runtime pool as bothy_app from database.url, with the
// password of database.password_ref when that file exists. applicationName
// shows in pg_stat_activity (for example "bothy-worker"). The pool has
// answered one ping.
func OpenAppPool(ctx context.Context, cfg *Config, sp *secrets.Provider, applicationName string) (*pgxpool.Pool, error) {
	return openAppPool(ctx, cfg, sp, applicationName, false)
}

// openAppPool is OpenAppPool; lazy skips the ping (a server process waits
// for the database in Process.Run).
func openAppPool(ctx context.Context, cfg *Config, sp *secrets.Provider, applicationName string, lazy bool) (*pgxpool.Pool, error) {
	password, err := optionalSecret(ctx, sp, cfg.Database.PasswordRef)
	if err != nil {
		return nil, fmt.Errorf("database.password_ref: %w", err)
	}
	return pg.Open(ctx, pg.Options{
		URL:              cfg.Database.URL,
		Password:         password,
		MaxConns:         cfg.Database.MaxConns,
		ApplicationName:  applicationName,
		StatementTimeout: cfg.Database.StatementTimeout,
		Lazy:             lazy,
	})
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
