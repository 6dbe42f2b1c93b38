package pg

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"bothy/server/internal/platform/otel/attr"
	"bothy/server/migrations"
)

// RiverSchemaVersion is the River schema this build runs on. It is pinned, not
// "latest", so that upgrading River is a visible change: a new River table
// needs its bothy_app grant in a goose migration of the same change.
const RiverSchemaVersion = 8

// RiverDroppedIndexes returns the indexes of River's schema that the goose
// migration 00058 drops because bothy never queries them (ADR 0086): the GIN
// indexes on river_job's args and metadata. River's reindexer must not look
// for them (jobs configures it), and raising RiverSchemaVersion needs a look
// at whether a new River migration relies on them.
func RiverDroppedIndexes() []string {
	return []string{"river_job_args_index", "river_job_metadata_index"}
}

// Migrate brings the database of pool (connected as the migration owner) up to
// date: River's schema to RiverSchemaVersion first, then the embedded goose
// migrations, whose first file grants River's tables to bothy_app. It is safe
// to run again and from several processes (both tools take a lock).
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	return migrateFS(ctx, pool, migrations.FS, log)
}

func migrateFS(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS, log *slog.Logger) error {
	rm, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quiet(log)})
	if err != nil {
		return fmt.Errorf("pg: river migrator: %w", err)
	}
	res, err := rm.Migrate(ctx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{TargetVersion: RiverSchemaVersion})
	if err != nil {
		return fmt.Errorf("pg: river migrations: %w", err)
	}
	if res != nil {
		for _, v := range res.Versions {
			log.InfoContext(ctx, "river migration applied", slog.Int(string(attr.MigrationVersion), v.Version))
		}
	}

	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := newGoose(db, fsys)
	if err != nil {
		return err
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("pg: goose migrations: %w", err)
	}
	for _, r := range results {
		log.InfoContext(ctx, "migration applied", slog.Int64(string(attr.MigrationVersion), r.Source.Version))
	}
	return nil
}

func newGoose(db *sql.DB, fsys fs.FS) (*goose.Provider, error) {
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("pg: goose provider: %w", err)
	}
	return p, nil
}

// SchemaStatus says whether the schema matches this build.
type SchemaStatus struct {
	// GooseCurrent and GooseTarget are the applied and embedded versions.
	GooseCurrent, GooseTarget int64
	// RiverCurrent is the highest applied River schema version.
	RiverCurrent int
}

// Current reports whether every migration of this build is applied.
func (s SchemaStatus) Current() bool {
	return s.GooseCurrent == s.GooseTarget && s.RiverCurrent == RiverSchemaVersion
}

// Status reads the applied versions. It works as bothy_app, which may read the
// version tables, so /readyz can call it.
func Status(ctx context.Context, pool *pgxpool.Pool) (SchemaStatus, error) {
	var st SchemaStatus
	target, err := latestGooseVersion(migrations.FS)
	if err != nil {
		return st, err
	}
	st.GooseTarget = target
	err = pool.QueryRow(ctx, `SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&st.GooseCurrent)
	if err != nil {
		return st, fmt.Errorf("pg: reading goose version: %w", err)
	}
	err = pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM river_migration WHERE line = 'main'`).Scan(&st.RiverCurrent)
	if err != nil {
		return st, fmt.Errorf("pg: reading river version: %w", err)
	}
	return st, nil
}

func latestGooseVersion(fsys fs.FS) (int64, error) {
	files, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, f := range files {
		v, err := goose.NumericComponent(f)
		if err != nil {
			return 0, fmt.Errorf("pg: migration %s: %w", f, err)
		}
		latest = max(latest, v)
	}
	return latest, nil
}

// quiet lowers River's migration logs to debug; Migrate logs what it applied.
func quiet(log *slog.Logger) *slog.Logger {
	return slog.New(discardBelow{h: log.Handler(), min: slog.LevelWarn})
}

type discardBelow struct {
	h   slog.Handler
	min slog.Level
}

func (d discardBelow) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= d.min && d.h.Enabled(ctx, l)
}
func (d discardBelow) Handle(ctx context.Context, r slog.Record) error { return d.h.Handle(ctx, r) }
func (d discardBelow) WithAttrs(a []slog.Attr) slog.Handler {
	return discardBelow{h: d.h.WithAttrs(a), min: d.min}
}
func (d discardBelow) WithGroup(n string) slog.Handler {
	return discardBelow{h: d.h.WithGroup(n), min: d.min}
}
