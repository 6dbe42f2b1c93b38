// Package postgres is the PostgreSQL side of the apps module, one adapter
// type per port: Store keeps the tables apps and app_installations
// (migrations 00035, 00036) behind app.Store, apps.Installations and
// identity.AppFactsSource; SubscriptionStore the owner side and
// DeliveryStore the delivery path of the webhook tables. Queries are sqlc
// code (queries/*.sql, generated into db/); every query joins the unit of
// work of its context through pg.Conn (the shared handle).
package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/postgres/db"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/identity"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
)

// handle is the query handle every store of this package shares: the pool
// (connected as bothy_app) and the sqlc queries on the ambient unit of
// work.
type handle struct {
	pool *pgxpool.Pool
}

// newHandle returns the handle over pool. It panics on a nil pool (a
// wiring bug); who names the constructor in the message.
func newHandle(pool *pgxpool.Pool, who string) handle {
	if pool == nil {
		panic("apps: postgres." + who + " needs a pool")
	}
	return handle{pool: pool}
}

// q returns the sqlc queries on the ambient unit of work of ctx, or on the
// pool.
func (h handle) q(ctx context.Context) *db.Queries { return db.New(pg.Conn(ctx, h.pool)) }

// Store implements app.Store (with apps.Installations, which it embeds)
// and identity.AppFactsSource over the tables apps and app_installations.
// The webhook tables have their own adapter types (SubscriptionStore,
// DeliveryStore), one for each port of the module.
type Store struct {
	handle
}

var (
	_ app.Store               = (*Store)(nil)
	_ apps.Installations      = (*Store)(nil)
	_ identity.AppFactsSource = (*Store)(nil)
)

// New returns the store over pool (connected as bothy_app). It panics on a
// nil pool (a wiring bug).
func New(pool *pgxpool.Pool) *Store {
	return &Store{handle: newHandle(pool, "New")}
}

// currentKey is the partial unique index that allows one installation per
// app that is not uninstalled.
const currentKey = "app_installations_current_key"

// InsertApp implements app.Store.
func (s *Store) InsertApp(ctx context.Context, a domain.App) error {
	raw, err := domain.EncodeManifest(a.Manifest)
	if err != nil {
		return errs.Wrap(err, "apps: encoding the manifest failed")
	}
	if err := s.q(ctx).AppInsert(ctx, db.AppInsertParams{
		ID: a.ID, PrincipalID: a.PrincipalID, Name: a.Name, Manifest: raw,
		CreatedBy: a.CreatedBy, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}); err != nil {
		return errs.Wrap(err, "apps: inserting the app failed")
	}
	return nil
}

// App implements app.Store.
func (s *Store) App(ctx context.Context, id ids.ID) (domain.App, bool, error) {
	row, err := s.q(ctx).AppGetByID(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.App{}, false, nil
	}
	if err != nil {
		return domain.App{}, false, errs.Wrap(err, "apps: reading the app failed")
	}
	a, err := fromApp(row)
	return a, err == nil, err
}

// Apps implements app.Store.
func (s *Store) Apps(ctx context.Context) ([]domain.App, error) {
	rows, err := s.q(ctx).AppList(ctx)
	if err != nil {
		return nil, errs.Wrap(err, "apps: listing the apps failed")
	}
	out := make([]domain.App, 0, len(rows))
	for _, row := range rows {
		a, err := fromApp(row)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func fromApp(row db.App) (domain.App, error) {
	m, err := domain.DecodeManifest(row.Manifest)
	if err != nil {
		return domain.App{}, errs.Wrap(err, "apps: decoding a stored manifest failed")
	}
	return domain.App{
		ID: row.ID, PrincipalID: row.PrincipalID, Name: row.Name, Manifest: m, CreatedBy: row.CreatedBy,
		CreatedAt: row.CreatedAt.UTC(), UpdatedAt: row.UpdatedAt.UTC(),
	}, nil
}

// Installation implements apps.Installations.
func (s *Store) Installation(ctx context.Context, id ids.ID, lock apps.Lock) (apps.Installation, bool, error) {
	q := s.q(ctx)
	switch lock {
	case apps.NoLock:
		return installation(q.AppInstallationGetByID(ctx, id))
	case apps.ForShare:
		if _, err := pg.RequireTx(ctx); err != nil {
			return apps.Installation{}, false, err
		}
		return installation(q.AppInstallationGetByIDForShare(ctx, id))
	}
	return apps.Installation{}, false, errUnknownLock
}

// CurrentInstallation implements apps.Installations.
func (s *Store) CurrentInstallation(ctx context.Context, appID ids.ID, lock apps.Lock) (apps.Installation, bool, error) {
	q := s.q(ctx)
	switch lock {
	case apps.NoLock:
		return installation(q.AppInstallationCurrentByApp(ctx, appID))
	case apps.ForShare:
		if _, err := pg.RequireTx(ctx); err != nil {
			return apps.Installation{}, false, err
		}
		return installation(q.AppInstallationCurrentByAppForShare(ctx, appID))
	}
	return apps.Installation{}, false, errUnknownLock
}

// LockCurrentInstallation implements app.Store.
func (s *Store) LockCurrentInstallation(ctx context.Context, appID ids.ID) (apps.Installation, bool, error) {
	if _, err := pg.RequireTx(ctx); err != nil {
		return apps.Installation{}, false, err
	}
	return installation(s.q(ctx).AppInstallationCurrentByAppForUpdate(ctx, appID))
}

var errUnknownLock = errs.Internalf("apps: unknown installation lock")

// installationRow is the shape of every installation read: the row and the
// app's principal.
type installationRow interface {
	db.AppInstallationGetByIDRow | db.AppInstallationGetByIDForShareRow |
		db.AppInstallationCurrentByAppRow | db.AppInstallationCurrentByAppForShareRow |
		db.AppInstallationCurrentByAppForUpdateRow
}

// installation converts the result of an installation read.
func installation[R installationRow](row R, err error) (apps.Installation, bool, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return apps.Installation{}, false, nil
	}
	if err != nil {
		return apps.Installation{}, false, errs.Wrap(err, "apps: reading the installation failed")
	}
	// Every row type has the same two fields; the conversion reads them.
	r := db.AppInstallationGetByIDRow(row)
	i := r.AppInstallation
	out := apps.Installation{
		ID: i.ID, AppID: i.AppID, PrincipalID: r.PrincipalID, State: apps.InstallationState(i.State),
		GrantedScopes: nonNil(i.GrantedScopes), EventSubscriptions: nonNil(i.EventSubscriptions),
		InstalledBy: i.InstalledBy, InstalledAt: i.InstalledAt.UTC(), UpdatedAt: i.UpdatedAt.UTC(),
	}
	if i.UninstalledAt != nil {
		out.UninstalledAt = i.UninstalledAt.UTC()
	}
	return out, true, nil
}

// InsertInstallation implements app.Store.
func (s *Store) InsertInstallation(ctx context.Context, inst apps.Installation) error {
	err := s.q(ctx).AppInstallationInsert(ctx, db.AppInstallationInsertParams{
		ID: inst.ID, AppID: inst.AppID, State: string(inst.State),
		GrantedScopes: nonNil(inst.GrantedScopes), EventSubscriptions: nonNil(inst.EventSubscriptions),
		InstalledBy: inst.InstalledBy, InstalledAt: inst.InstalledAt, UpdatedAt: inst.UpdatedAt,
		UninstalledAt: pg.NullTime(inst.UninstalledAt),
	})
	if pg.IsUniqueViolation(err, currentKey) {
		return errs.Conflict(domain.ReasonAlreadyInstalled)
	}
	if err != nil {
		return errs.Wrap(err, "apps: inserting the installation failed")
	}
	return nil
}

// UpdateInstallation implements app.Store.
func (s *Store) UpdateInstallation(ctx context.Context, inst apps.Installation) error {
	n, err := s.q(ctx).AppInstallationUpdate(ctx, db.AppInstallationUpdateParams{
		ID: inst.ID, State: string(inst.State),
		GrantedScopes: nonNil(inst.GrantedScopes), EventSubscriptions: nonNil(inst.EventSubscriptions),
		UpdatedAt: inst.UpdatedAt, UninstalledAt: pg.NullTime(inst.UninstalledAt),
	})
	if err != nil {
		return errs.Wrap(err, "apps: updating the installation failed")
	}
	if n != 1 {
		return errs.Internalf("apps: the installation to update does not exist")
	}
	return nil
}

// AppFacts implements identity.AppFactsSource: the facts of the current
// installation of the app whose principal is principalID, read in the unit
// of work of ctx when there is one. False when the principal is no app or
// the app has no active or suspended installation.
func (s *Store) AppFacts(ctx context.Context, principalID ids.ID) (identity.AppFacts, bool, error) {
	row, err := s.q(ctx).AppInstallationFactsByPrincipal(ctx, principalID)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.AppFacts{}, false, nil
	}
	if err != nil {
		return identity.AppFacts{}, false, errs.Wrap(err, "apps: reading the app facts failed")
	}
	return identity.AppFacts{
		InstallationID: row.ID,
		Active:         apps.InstallationState(row.State) == apps.InstallationActive,
		GrantedScopes:  nonNil(row.GrantedScopes),
	}, true, nil
}

// nonNil returns s, or an empty slice for nil: a column that is NOT NULL
// reads as empty rather than nil, and pgx sends a nil slice as NULL
// instead of an empty array.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
