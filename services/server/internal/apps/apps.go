// Package apps is the port of the apps module: what other modules, and the
// webhook use cases of this module, may know about app installations.
//
// An app is registered from its manifest (docs/spec/11-extensions.md 3) and
// has one principal of kind app. An owner installs it: the installation
// holds the granted scopes and the event subscriptions, and its state
// (active, suspended, uninstalled) decides whether the app may act and
// whether its webhook deliveries go out. At most one installation per app is
// not uninstalled; that one is the app's current installation.
//
// The port uses the standard library and internal/kernel only.
package apps

import (
	"context"
	"time"

	"bothy/server/internal/kernel/ids"
)

// InstallationState is the state column of app_installations
// (docs/spec/11-extensions.md 4.3).
type InstallationState string

// The installation states.
const (
	// InstallationActive: the app token works and webhook deliveries go out.
	InstallationActive InstallationState = "active"
	// InstallationSuspended: the app token is refused; webhook deliveries
	// are still created and wait until the installation is resumed.
	InstallationSuspended InstallationState = "suspended"
	// InstallationUninstalled: final. The app tokens are revoked and the
	// webhook subscriptions disabled; a new install creates a new row.
	InstallationUninstalled InstallationState = "uninstalled"
)

// Installation is one row of app_installations with the principal of its
// app.
type Installation struct {
	// ID identifies the installation.
	ID ids.ID
	// AppID is the installed app.
	AppID ids.ID
	// PrincipalID is the app's principal: the actor of its app token and
	// the receiver of its webhook deliveries.
	PrincipalID ids.ID
	// State is active, suspended or uninstalled.
	State InstallationState
	// GrantedScopes are the app scopes the owner granted, in catalogue
	// order (events:subscribe, messages:read, messages:write,
	// channels:read); never nil.
	GrantedScopes []string
	// EventSubscriptions are the event types the installation may
	// subscribe to, in manifest order; never nil.
	EventSubscriptions []string
	// InstalledBy is the owner who installed the app.
	InstalledBy ids.ID
	// InstalledAt and UpdatedAt are the creation and last change times.
	InstalledAt, UpdatedAt time.Time
	// UninstalledAt is set once the state is uninstalled.
	UninstalledAt time.Time
}

// Live reports whether the installation is active or suspended, that is
// not uninstalled.
func (i Installation) Live() bool {
	return i.State == InstallationActive || i.State == InstallationSuspended
}

// Lock says whether a read locks the installation row.
type Lock int

// The locks of a read.
const (
	// NoLock reads without a row lock.
	NoLock Lock = iota
	// ForShare takes a FOR SHARE row lock, held until the unit of work
	// ends: concurrent readers pass, while an uninstall, suspend, resume or
	// scope change of the installation waits. Use it when a write of the
	// caller depends on the installation staying as read (for example a
	// webhook subscription created for it).
	ForShare
)

// Installations reads app installations. Both methods join the unit of
// work of ctx (pg.Conn); a read with ForShare outside a unit of work is an
// internal error, because its lock would end with the statement.
//
// They do not authorize: callers have decided their own action first.
type Installations interface {
	// Installation returns the installation id in any state, uninstalled
	// included, and false when there is none.
	Installation(ctx context.Context, id ids.ID, lock Lock) (Installation, bool, error)
	// CurrentInstallation returns the installation of appID that is not
	// uninstalled (active or suspended), and false when the app is unknown
	// or not installed.
	CurrentInstallation(ctx context.Context, appID ids.ID, lock Lock) (Installation, bool, error)
}
