// Package identity is the port of the identity module: authentication of
// bearer tokens into principals, and the principals of apps and agents that
// other modules create.
package identity

import (
	"context"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
)

// Authenticator turns a bearer token into a principal.
type Authenticator interface {
	// Authenticate returns the principal of token: a person (session or
	// personal token) or an app (app token), with the facts authorization
	// needs (role, step-up time, installation and scopes). It returns an
	// *errs.Error with code unauthorized for an unknown, expired or revoked
	// token, and never reveals which of these it was.
	Authenticate(ctx context.Context, token string) (actor.Principal, error)
}

// AppFacts are the current facts of an app principal's installation.
type AppFacts struct {
	// InstallationID is the app's current installation.
	InstallationID ids.ID
	// Active is true while the installation is active (not suspended,
	// not uninstalled).
	Active bool
	// GrantedScopes are the installation's granted scopes.
	GrantedScopes []string
}

// AppFactsSource reads installation facts for an app principal. The apps
// module implements it; identity calls it when an app token authenticates,
// so the principal always carries current facts.
type AppFactsSource interface {
	// AppFacts returns the facts of the app whose principal is
	// principalID; false when the app has no installation.
	AppFacts(ctx context.Context, principalID ids.ID) (AppFacts, bool, error)
}

// Principals creates and manages non-person principals.
type Principals interface {
	// CreateAppPrincipal creates the principal of a newly registered app in
	// the unit of work of ctx and returns its ID.
	CreateAppPrincipal(ctx context.Context, displayName string) (ids.ID, error)
	// IssueAppToken creates a new app token for principalID in the unit of
	// work of ctx and returns it; only its hash is stored. The token is a
	// one-time secret.
	IssueAppToken(ctx context.Context, principalID ids.ID) (string, error)
	// RevokeAppTokens revokes every token of principalID in the unit of work.
	RevokeAppTokens(ctx context.Context, principalID ids.ID) error
}
