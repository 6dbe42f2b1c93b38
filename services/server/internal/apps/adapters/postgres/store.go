// Package postgres is the PostgreSQL side of the apps platform: the tables
// apps and app_installations (migrations 00035, 00036) behind app.Store,
// apps.Installations and identity.AppFactsSource. Plain pgx SQL; every
// query joins the unit of work of its context through pg.Conn.
package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/identity"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
)

// Store implements app.Store, apps.Installations and
// identity.AppFactsSource over one pool.
type Store struct {
	pool *pgxpool.Pool
}

var (
	_ app.Store               = (*Store)(nil)
	_ apps.Installations      = (*Store)(nil)
	_ identity.AppFactsSource = (*Store)(nil)
)

// New returns the store over pool (connected as bothy_app). It panics on a
// nil pool (a wiring bug).
func New(pool *pgxpool.Pool) *Store {
	if pool == nil {
		panic("apps: postgres.New needs a pool")
	}
	return &Store{pool: pool}
}

// currentKey is the partial unique index that allows one installation per
// app that is not uninstalled.
const currentKey = "app_installations_current_key"

const insertApp = `
INSERT INTO apps (id, principal_id, name, manifest, created_by, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`

// InsertApp implements app.Store.
func (s *Store) InsertApp(ctx context.Context, a domain.App) error {
	raw, err := domain.EncodeManifest(a.Manifest)
	if err != nil {
		return errs.Wrap(err, "apps: encoding the manifest failed")
	}
	if _, err := pg.Conn(ctx, s.pool).Exec(ctx, insertApp,
		a.ID, a.PrincipalID, a.Name, raw, a.CreatedBy, a.CreatedAt, a.UpdatedAt); err != nil {
		return errs.Wrap(err, "apps: inserting the app failed")
	}
	return nil
}

const selectApp = `SELECT id, principal_id, name, manifest, created_by, created_at, updated_at FROM apps`

// App implements app.Store.
func (s *Store) App(ctx context.Context, id ids.ID) (domain.App, bool, error) {
	rows, err := pg.Conn(ctx, s.pool).Query(ctx, selectApp+` WHERE id = $1`, id)
	if err != nil {
		return domain.App{}, false, errs.Wrap(err, "apps: reading the app failed")
	}
	list, err := scanApps(rows)
	if err != nil || len(list) == 0 {
		return domain.App{}, false, err
	}
	return list[0], true, nil
}

// Apps implements app.Store.
func (s *Store) Apps(ctx context.Context) ([]domain.App, error) {
	rows, err := pg.Conn(ctx, s.pool).Query(ctx, selectApp+` ORDER BY name, id`)
	if err != nil {
		return nil, errs.Wrap(err, "apps: listing the apps failed")
	}
	return scanApps(rows)
}

func scanApps(rows pgx.Rows) ([]domain.App, error) {
	defer rows.Close()
	out := []domain.App{}
	for rows.Next() {
		var (
			a   domain.App
			raw []byte
		)
		if err := rows.Scan(&a.ID, &a.PrincipalID, &a.Name, &raw, &a.CreatedBy, &a.CreatedAt, &a.UpdatedAt); err != nil {
			return nil, errs.Wrap(err, "apps: reading the app failed")
		}
		m, err := domain.DecodeManifest(raw)
		if err != nil {
			return nil, errs.Wrap(err, "apps: decoding a stored manifest failed")
		}
		a.Manifest = m
		a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, errs.Wrap(err, "apps: reading the apps failed")
	}
	return out, nil
}

const selectInstallation = `
SELECT i.id, i.app_id, a.principal_id, i.state, i.granted_scopes, i.event_subscriptions,
       i.installed_by, i.installed_at, i.updated_at, i.uninstalled_at
FROM app_installations i JOIN apps a ON a.id = i.app_id`

// Installation implements apps.Installations.
func (s *Store) Installation(ctx context.Context, id ids.ID, lock apps.Lock) (apps.Installation, bool, error) {
	suffix, err := lockClause(lock)
	if err != nil {
		return apps.Installation{}, false, err
	}
	return s.readInstallation(ctx, selectInstallation+` WHERE i.id = $1`, id, suffix)
}

// CurrentInstallation implements apps.Installations.
func (s *Store) CurrentInstallation(ctx context.Context, appID ids.ID, lock apps.Lock) (apps.Installation, bool, error) {
	suffix, err := lockClause(lock)
	if err != nil {
		return apps.Installation{}, false, err
	}
	return s.readInstallation(ctx, selectCurrent, appID, suffix)
}

// LockCurrentInstallation implements app.Store.
func (s *Store) LockCurrentInstallation(ctx context.Context, appID ids.ID) (apps.Installation, bool, error) {
	return s.readInstallation(ctx, selectCurrent, appID, forUpdate)
}

const (
	selectCurrent = selectInstallation + ` WHERE i.app_id = $1 AND i.state <> 'uninstalled'`
	forShare      = ` FOR SHARE OF i`
	forUpdate     = ` FOR UPDATE OF i`
)

// lockClause returns the locking clause of a port lock.
func lockClause(lock apps.Lock) (string, error) {
	switch lock {
	case apps.NoLock:
		return "", nil
	case apps.ForShare:
		return forShare, nil
	default:
		return "", errs.Internalf("apps: unknown installation lock")
	}
}

// readInstallation runs query with the locking clause lock ("" for none)
// and one argument.
func (s *Store) readInstallation(ctx context.Context, query string, arg ids.ID, lock string) (apps.Installation, bool, error) {
	if _, inTx := pg.TxFrom(ctx); lock != "" && !inTx {
		return apps.Installation{}, false, errs.Internalf("apps: a locking installation read needs a unit of work")
	}
	var (
		inst          apps.Installation
		state         string
		uninstalledAt *time.Time
	)
	err := pg.Conn(ctx, s.pool).QueryRow(ctx, query+lock, arg).Scan(&inst.ID, &inst.AppID, &inst.PrincipalID, &state,
		&inst.GrantedScopes, &inst.EventSubscriptions, &inst.InstalledBy, &inst.InstalledAt, &inst.UpdatedAt, &uninstalledAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return apps.Installation{}, false, nil
	}
	if err != nil {
		return apps.Installation{}, false, errs.Wrap(err, "apps: reading the installation failed")
	}
	inst.State = apps.InstallationState(state)
	inst.InstalledAt, inst.UpdatedAt = inst.InstalledAt.UTC(), inst.UpdatedAt.UTC()
	if uninstalledAt != nil {
		inst.UninstalledAt = uninstalledAt.UTC()
	}
	inst.GrantedScopes = nonNil(inst.GrantedScopes)
	inst.EventSubscriptions = nonNil(inst.EventSubscriptions)
	return inst, true, nil
}

const insertInstallation = `
INSERT INTO app_installations (id, app_id, state, granted_scopes, event_subscriptions,
	installed_by, installed_at, updated_at, uninstalled_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// InsertInstallation implements app.Store.
func (s *Store) InsertInstallation(ctx context.Context, inst apps.Installation) error {
	_, err := pg.Conn(ctx, s.pool).Exec(ctx, insertInstallation, inst.ID, inst.AppID, string(inst.State),
		nonNil(inst.GrantedScopes), nonNil(inst.EventSubscriptions), inst.InstalledBy, inst.InstalledAt, inst.UpdatedAt,
		nullTime(inst.UninstalledAt))
	if pg.IsUniqueViolation(err, currentKey) {
		return errs.Conflict(domain.ReasonAlreadyInstalled)
	}
	if err != nil {
		return errs.Wrap(err, "apps: inserting the installation failed")
	}
	return nil
}

const updateInstallation = `
UPDATE app_installations
SET state = $2, granted_scopes = $3, event_subscriptions = $4, updated_at = $5, uninstalled_at = $6
WHERE id = $1`

// UpdateInstallation implements app.Store.
func (s *Store) UpdateInstallation(ctx context.Context, inst apps.Installation) error {
	tag, err := pg.Conn(ctx, s.pool).Exec(ctx, updateInstallation, inst.ID, string(inst.State),
		nonNil(inst.GrantedScopes), nonNil(inst.EventSubscriptions), inst.UpdatedAt, nullTime(inst.UninstalledAt))
	if err != nil {
		return errs.Wrap(err, "apps: updating the installation failed")
	}
	if tag.RowsAffected() != 1 {
		return errs.Internalf("apps: the installation to update does not exist")
	}
	return nil
}

const selectFacts = `
SELECT i.id, i.state, i.granted_scopes
FROM apps a JOIN app_installations i ON i.app_id = a.id
WHERE a.principal_id = $1 AND i.state <> 'uninstalled'`

// AppFacts implements identity.AppFactsSource: the facts of the current
// installation of the app whose principal is principalID, read in the unit
// of work of ctx when there is one. False when the principal is no app or
// the app has no active or suspended installation.
func (s *Store) AppFacts(ctx context.Context, principalID ids.ID) (identity.AppFacts, bool, error) {
	var (
		f     identity.AppFacts
		state string
	)
	err := pg.Conn(ctx, s.pool).QueryRow(ctx, selectFacts, principalID).Scan(&f.InstallationID, &state, &f.GrantedScopes)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.AppFacts{}, false, nil
	}
	if err != nil {
		return identity.AppFacts{}, false, errs.Wrap(err, "apps: reading the app facts failed")
	}
	f.Active = apps.InstallationState(state) == apps.InstallationActive
	f.GrantedScopes = nonNil(f.GrantedScopes)
	return f, true, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
