package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/ids"
)

// Platform is the apps platform as its driving adapters see it: the use
// cases of Service (one file each; their doc comments say what each
// authorizes and returns). adapters/httpapi takes this port, not the
// concrete Service, as its webhook handlers take apps.Webhooks. It is
// declared here and not in the module's port internal/apps because its
// commands and answers (RegisterApp, Installed, domain.App) are types of
// this package and of domain, which no other module may import.
type Platform interface {
	RegisterApp(ctx context.Context, cmd RegisterApp) (domain.App, error)
	GetApp(ctx context.Context, appID ids.ID) (domain.App, error)
	ListApps(ctx context.Context) ([]domain.App, error)
	InstallApp(ctx context.Context, cmd InstallApp) (Installed, error)
	UninstallApp(ctx context.Context, appID ids.ID) error
	SuspendApp(ctx context.Context, appID ids.ID) (apps.Installation, error)
	ResumeApp(ctx context.Context, appID ids.ID) (apps.Installation, error)
	SetAppScopes(ctx context.Context, cmd SetAppScopes) (apps.Installation, error)
	CreateAppGrant(ctx context.Context, cmd CreateAppGrant) (authz.Grant, error)
	ListAppGrants(ctx context.Context, appID ids.ID) ([]authz.Grant, error)
	DeleteAppGrant(ctx context.Context, appID, grantID ids.ID) error
}

var _ Platform = (*Service)(nil)

// Store persists apps and installations (tables apps and app_installations).
// Every method joins the unit of work of ctx; the use cases always call it
// inside one. Implemented by adapters/postgres.
type Store interface {
	apps.Installations
	// InsertApp stores a new app.
	InsertApp(ctx context.Context, a domain.App) error
	// App returns the app id, and false when there is none.
	App(ctx context.Context, id ids.ID) (domain.App, bool, error)
	// Apps returns every app ordered by name, then id; never nil.
	Apps(ctx context.Context) ([]domain.App, error)
	// LockCurrentInstallation returns the installation of appID that is
	// not uninstalled with a FOR UPDATE row lock held until the unit of work
	// ends, and false when there is none.
	LockCurrentInstallation(ctx context.Context, appID ids.ID) (apps.Installation, bool, error)
	// InsertInstallation stores a new installation. It returns a
	// *errs.Error conflict with reason already_installed when the app
	// already has one that is not uninstalled (also when a concurrent
	// install committed first).
	InsertInstallation(ctx context.Context, inst apps.Installation) error
	// UpdateInstallation writes State, GrantedScopes, EventSubscriptions,
	// UpdatedAt and UninstalledAt of inst.ID.
	UpdateInstallation(ctx context.Context, inst apps.Installation) error
}

// InstallationHooks is where the webhook work joins the installation
// lifecycle (D-M2-26-15). Each method runs inside
// the unit of work of the use case that calls it, after the installation
// row is written and before the use case records its audit entry and
// appends app.installation.updated, so the hook's writes commit or roll
// back with the change. An error rolls the use case back. The hooks run
// with the ctx of the use case: actor.From(ctx) is the acting owner and the
// correlation ID is the request's.
type InstallationHooks interface {
	// Installed runs in installApp. When m.Delivery.Mode is webhook, the
	// webhook work creates the installation's subscription to
	// m.Delivery.EventsURL for inst.EventSubscriptions (authorized with
	// webhook_out.manage and audited on its own).
	Installed(ctx context.Context, inst apps.Installation, m domain.Manifest) error
	// Uninstalled runs in uninstallApp: the webhook work disables every
	// subscription of the installation.
	Uninstalled(ctx context.Context, inst apps.Installation) error
	// Resumed runs in resumeApp: the webhook work makes the head delivery
	// of each active subscription of the installation due now and schedules
	// its job (apps.Webhooks.ResumeInstallation).
	Resumed(ctx context.Context, inst apps.Installation) error
}
