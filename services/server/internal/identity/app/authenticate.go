package app

import (
	"context"
	"slices"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
)

// Authenticate implements identity.Authenticator: it turns a bearer token
// into the principal the HTTP chain puts into the request context.
//
//   - A session token ("bts_") gives the person with role, SessionID and
//     SteppedUpAt.
//   - A personal token ("btp_") gives the person with role, SessionID = the
//     token's ID and ViaPersonalToken; never a SteppedUpAt.
//   - An app token ("bta_") gives the app with the facts of its current
//     installation, read through the AppFactsSource on every request, so a
//     suspended installation or a removed scope applies at once.
//
// The owner of a token comes from the cache of token owners when it may
// (tokenCache, ADR 0102), else from the store; an app's installation facts
// are read on every request all the same. Only the
// SHA-256 of the token is looked up. Malformed, unknown, expired
// and revoked tokens, and app tokens of an app without installation, all
// give the same unauthorized error. Other errors (database) are internal.
func (s *Service) Authenticate(ctx context.Context, token string) (actor.Principal, error) {
	kind, hash, ok := domain.ParseToken(token)
	if !ok {
		return actor.Principal{}, errUnauthorized()
	}
	owner, ok, err := s.lookupToken(ctx, kind, hash)
	if err != nil {
		return actor.Principal{}, err
	}
	if !ok {
		return actor.Principal{}, errUnauthorized()
	}
	switch kind {
	case domain.TokenSession:
		return actor.Principal{ID: owner.PrincipalID, Kind: actor.KindPerson, Role: owner.Role,
			SessionID: owner.ID, SteppedUpAt: owner.SteppedUpAt}, nil
	case domain.TokenPersonal:
		return actor.Principal{ID: owner.PrincipalID, Kind: actor.KindPerson, Role: owner.Role,
			SessionID: owner.ID, ViaPersonalToken: true}, nil
	default:
		facts, ok, err := s.appFacts.AppFacts(ctx, owner.PrincipalID)
		if err != nil {
			return actor.Principal{}, err
		}
		if !ok {
			return actor.Principal{}, errUnauthorized()
		}
		return actor.Principal{ID: owner.PrincipalID, Kind: actor.KindApp, SessionID: owner.ID,
			InstallationID: facts.InstallationID, InstallationActive: facts.Active,
			GrantedScopes: slices.Clone(facts.GrantedScopes)}, nil
	}
}
