// Package actor carries the authenticated principal of a request or job
// through the context. The HTTP chain resolves it once per request; jobs
// build the principal they act for (for example the app of a webhook
// subscription, with its current grants and scopes).
package actor

import (
	"context"
	"slices"
	"time"

	"bothy/server/internal/kernel/ids"
)

// Kind is the kind of a principal (docs/spec/07-permissions.md 2).
type Kind string

// The principal kinds.
const (
	// KindPerson is a human with an instance role.
	KindPerson Kind = "person"
	// KindApp is an installed app acting with its app token or as the
	// receiver of webhook deliveries.
	KindApp Kind = "app"
	// KindAgent is an agent principal (agent transport is not built yet).
	KindAgent Kind = "agent"
	// KindSystem is the server itself: system transitions, maintenance jobs.
	KindSystem Kind = "system"
)

// Role is the instance role of a person.
type Role string

// The instance roles.
const (
	// RoleOwner may administer the instance (owner-only actions).
	RoleOwner Role = "owner"
	// RoleMember is every other person.
	RoleMember Role = "member"
)

// Principal is who acts. The zero value is "nobody" (anonymous).
type Principal struct {
	// ID is the principal's identifier (person, app or agent principal ID).
	ID ids.ID
	// Kind says what ID names.
	Kind Kind
	// Role is the instance role; set for persons only.
	Role Role
	// SessionID names the session or token the request authenticated with.
	SessionID ids.ID
	// ViaPersonalToken is true when a person authenticated with a personal
	// token: it never satisfies step-up and never reaches owner-only actions.
	ViaPersonalToken bool
	// SteppedUpAt is the last step-up of the session; zero when never.
	SteppedUpAt time.Time
	// InstallationID is the app installation an app principal acts through.
	InstallationID ids.ID
	// InstallationActive is the liveness fact of the installation, read in
	// the same request or unit of work (an app acts only while active).
	InstallationActive bool
	// GrantedScopes are the app scopes of the installation, for example
	// "events:subscribe" and "messages:read".
	GrantedScopes []string
}

// Anonymous reports whether p is nobody.
func (p Principal) Anonymous() bool { return p.Kind == "" }

// IsOwner reports whether p is a person with the owner role.
func (p Principal) IsOwner() bool { return p.Kind == KindPerson && p.Role == RoleOwner }

// HasScope reports whether an app principal holds scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.GrantedScopes, scope) }

// System is the principal of the server's own actions.
var System = Principal{Kind: KindSystem}

type ctxKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal of ctx, or the anonymous zero value.
func From(ctx context.Context) Principal {
	p, _ := ctx.Value(ctxKey{}).(Principal)
	return p
}
