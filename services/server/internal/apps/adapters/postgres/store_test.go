package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/postgres"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/identity"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

type testBundle struct {
	db    *pgtest.DB
	uow   *pg.UnitOfWork
	store *postgres.Store
	subs  *postgres.SubscriptionStore
	owner ids.ID
}

func setup(t testing.TB) *testBundle {
	t.Helper()
	db := pgtest.New(t)
	b := &testBundle{
		db: db, uow: pg.NewUnitOfWork(db.App, 3, 5*time.Second),
		store: postgres.New(db.App), subs: postgres.NewSubscriptionStore(db.App),
	}
	b.owner = b.principal(t, "person", "Robin")
	return b
}

// principal inserts a principals row: the identity module creates them in
// the running server; this adapter test only needs the foreign key.
func (b *testBundle) principal(t testing.TB, kind, name string) ids.ID {
	t.Helper()
	id := ids.New()
	_, err := b.db.App.Exec(context.Background(),
		`INSERT INTO principals (id, kind, display_name, created_at) VALUES ($1, $2, $3, $4)`, id, kind, name, start)
	require.NoError(t, err)
	return id
}

func (b *testBundle) app(t testing.TB, name string) domain.App {
	t.Helper()
	a := domain.App{
		ID: ids.New(), PrincipalID: b.principal(t, "app", name), Name: name,
		Manifest: domain.Manifest{
			Name: name, Scopes: []string{"events:subscribe", "messages:read"}, Events: []string{"message.created"},
			Delivery: domain.Delivery{Mode: domain.DeliveryWebhook, EventsURL: "https://hooks.example.com/bothy/events"},
		},
		CreatedBy: b.owner, CreatedAt: start, UpdatedAt: start,
	}
	require.NoError(t, b.store.InsertApp(context.Background(), a))
	return a
}

func (b *testBundle) install(t testing.TB, a domain.App) apps.Installation {
	t.Helper()
	inst := apps.Installation{
		ID: ids.New(), AppID: a.ID, PrincipalID: a.PrincipalID, State: apps.InstallationActive,
		GrantedScopes: []string{"events:subscribe", "messages:read"}, EventSubscriptions: []string{"message.created"},
		InstalledBy: b.owner, InstalledAt: start, UpdatedAt: start,
	}
	require.NoError(t, b.store.InsertInstallation(context.Background(), inst))
	return inst
}

func TestAppsRoundTripAndOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	tracker := b.app(t, "Tracker")
	alpha := b.app(t, "Alpha")

	got, ok, err := b.store.App(ctx, tracker.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, tracker, got)

	_, ok, err = b.store.App(ctx, ids.New())
	require.NoError(t, err)
	require.False(t, ok, "an unknown app is absent, not an error")

	list, err := b.store.Apps(ctx)
	require.NoError(t, err)
	require.Equal(t, []domain.App{alpha, tracker}, list, "ordered by name")
}

func TestAppsListIsEmptyNotNil(t *testing.T) {
	t.Parallel()
	b := setup(t)
	list, err := b.store.Apps(context.Background())
	require.NoError(t, err)
	require.NotNil(t, list)
	require.Empty(t, list)
}

func TestOneLiveInstallationPerApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.app(t, "Tracker")
	first := b.install(t, a)

	second := first
	second.ID = ids.New()
	err := b.store.InsertInstallation(ctx, second)
	require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
	require.Equal(t, domain.ReasonAlreadyInstalled, errs.ReasonOf(err))

	second.State = apps.InstallationSuspended
	err = b.store.InsertInstallation(ctx, second)
	require.Equal(t, domain.ReasonAlreadyInstalled, errs.ReasonOf(err), "suspended counts as installed")

	first.State, first.UpdatedAt, first.UninstalledAt = apps.InstallationUninstalled, start.Add(time.Hour), start.Add(time.Hour)
	require.NoError(t, b.store.UpdateInstallation(ctx, first))
	require.NoError(t, b.store.InsertInstallation(ctx, second), "after an uninstall the app installs again")

	got, ok, err := b.store.Installation(ctx, first.ID, apps.NoLock)
	require.NoError(t, err)
	require.True(t, ok, "an uninstalled installation is still readable by id")
	require.Equal(t, first, got)

	cur, ok, err := b.store.CurrentInstallation(ctx, a.ID, apps.NoLock)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, second, cur, "the current installation is the live one")
}

func TestCurrentInstallationOfAnUninstalledOrUnknownApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.app(t, "Tracker")
	_, ok, err := b.store.CurrentInstallation(ctx, a.ID, apps.NoLock)
	require.NoError(t, err)
	require.False(t, ok, "registered, not installed")

	_, ok, err = b.store.CurrentInstallation(ctx, ids.New(), apps.NoLock)
	require.NoError(t, err)
	require.False(t, ok)

	_, ok, err = b.store.Installation(ctx, ids.New(), apps.NoLock)
	require.NoError(t, err)
	require.False(t, ok)
}

func TestLocksNeedAUnitOfWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	inst := b.install(t, b.app(t, "Tracker"))

	_, _, err := b.store.Installation(ctx, inst.ID, apps.ForShare)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
	_, _, err = b.store.LockCurrentInstallation(ctx, inst.AppID)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
	_, _, err = b.store.CurrentInstallation(ctx, inst.AppID, apps.Lock(7))
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err), "an unknown lock is a wiring bug")
}

// TestForShareHoldsOffWriters: a FOR SHARE read lets other readers pass and
// keeps a FOR UPDATE (every change of the installation) out until the unit
// of work ends.
func TestForShareHoldsOffWriters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	inst := b.install(t, b.app(t, "Tracker"))

	tx, err := b.db.App.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	got, ok, err := b.store.Installation(pg.WithTx(ctx, tx), inst.ID, apps.ForShare)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, inst, got)

	_, err = b.db.App.Exec(ctx, `SELECT 1 FROM app_installations WHERE id = $1 FOR SHARE NOWAIT`, inst.ID)
	require.NoError(t, err, "readers share the lock")
	_, err = b.db.App.Exec(ctx, `SELECT 1 FROM app_installations WHERE id = $1 FOR UPDATE NOWAIT`, inst.ID)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	require.Equal(t, "55P03", pgErr.Code, "a writer cannot take the row")

	require.NoError(t, tx.Rollback(ctx))
	_, err = b.db.App.Exec(ctx, `SELECT 1 FROM app_installations WHERE id = $1 FOR UPDATE NOWAIT`, inst.ID)
	require.NoError(t, err, "the lock ends with the unit of work")
}

func TestLockCurrentInstallationInAUnitOfWork(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	inst := b.install(t, b.app(t, "Tracker"))
	err := b.uow.Do(ctx, func(ctx context.Context) error {
		got, ok, err := b.store.LockCurrentInstallation(ctx, inst.AppID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, inst, got)
		_, err = b.db.App.Exec(context.Background(), `SELECT 1 FROM app_installations WHERE id = $1 FOR SHARE NOWAIT`, inst.ID)
		require.Error(t, err, "FOR UPDATE keeps even readers that lock out")
		return nil
	})
	require.NoError(t, err)
}

func TestAppFacts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.app(t, "Tracker")
	var src identity.AppFactsSource = b.store

	_, ok, err := src.AppFacts(ctx, a.PrincipalID)
	require.NoError(t, err)
	require.False(t, ok, "not installed")

	inst := b.install(t, a)
	f, ok, err := src.AppFacts(ctx, a.PrincipalID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, identity.AppFacts{InstallationID: inst.ID, Active: true, GrantedScopes: []string{"events:subscribe", "messages:read"}}, f)

	inst.State = apps.InstallationSuspended
	require.NoError(t, b.store.UpdateInstallation(ctx, inst))
	f, ok, err = src.AppFacts(ctx, a.PrincipalID)
	require.NoError(t, err)
	require.True(t, ok)
	require.False(t, f.Active, "suspended is not active")

	inst.State, inst.UninstalledAt = apps.InstallationUninstalled, start
	require.NoError(t, b.store.UpdateInstallation(ctx, inst))
	_, ok, err = src.AppFacts(ctx, a.PrincipalID)
	require.NoError(t, err)
	require.False(t, ok, "uninstalled has no facts")

	_, ok, err = src.AppFacts(ctx, b.owner)
	require.NoError(t, err)
	require.False(t, ok, "a person is no app")
}

func TestUpdateOfAnUnknownInstallationFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	err := b.store.UpdateInstallation(context.Background(), apps.Installation{ID: ids.New(), State: apps.InstallationActive, UpdatedAt: start})
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
}

// TestSchemaRefusesWhatTheRulesRefuse: the checks of migrations 00035 and
// 00036 hold even for writes that bypass the use cases.
func TestSchemaRefusesWhatTheRulesRefuse(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.app(t, "Tracker")
	insert := `INSERT INTO app_installations (id, app_id, state, granted_scopes, event_subscriptions, installed_by, installed_at, updated_at, uninstalled_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)`
	for name, args := range map[string][]any{
		"an unknown scope":                 {ids.New(), a.ID, "active", []string{"root"}, []string{}, b.owner, start, nil},
		"an unknown state":                 {ids.New(), a.ID, "archived", []string{}, []string{}, b.owner, start, nil},
		"uninstalled without its time":     {ids.New(), a.ID, "uninstalled", []string{}, []string{}, b.owner, start, nil},
		"active with an uninstall time":    {ids.New(), a.ID, "active", []string{}, []string{}, b.owner, start, start},
		"a null event subscription":        {ids.New(), a.ID, "active", []string{}, []*string{nil}, b.owner, start, nil},
		"an installation of no app at all": {ids.New(), ids.New(), "active", []string{}, []string{}, b.owner, start, nil},
	} {
		_, err := b.db.App.Exec(ctx, insert, args...)
		require.Error(t, err, name)
	}
	_, err := b.db.App.Exec(ctx, `INSERT INTO apps (id, principal_id, name, manifest, created_by, created_at, updated_at)
		VALUES ($1, $2, 'Tracker', '{}', $3, $4, $4)`, ids.New(), a.PrincipalID, b.owner, start)
	require.True(t, pg.IsUniqueViolation(err, "apps_principal_id_key"), "one app per principal")
	_, err = b.db.App.Exec(ctx, `INSERT INTO apps (id, principal_id, name, manifest, created_by, created_at, updated_at)
		VALUES ($1, $2, 'Tracker', '[]', $3, $4, $4)`, ids.New(), b.principal(t, "app", "Other"), b.owner, start)
	require.Error(t, err, "a manifest is an object")
}
