package app

import (
	"context"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// CreateAppPrincipal implements identity.Principals: it creates the
// principal of a newly registered app in the unit of work of ctx. The apps
// module calls it inside its own use case, which authorizes and audits.
// Errors: validation_failed with pointer /display_name; internal errors of
// the store.
func (s *Service) CreateAppPrincipal(ctx context.Context, displayName string) (ids.ID, error) {
	return s.createPrincipal(ctx, actor.KindApp, displayName)
}

func (s *Service) createPrincipal(ctx context.Context, kind actor.Kind, displayName string) (ids.ID, error) {
	name, err := domain.NormalizeName("/display_name", displayName)
	if err != nil {
		return ids.Zero, err
	}
	var id ids.ID
	err = s.uow.Do(ctx, func(ctx context.Context) error {
		now := s.clock.Now()
		if id, err = s.newID(now); err != nil {
			return err
		}
		if err := s.store.CreatePrincipal(ctx, id, kind, name, now); err != nil {
			return err
		}
		if kind == actor.KindAgent {
			return s.store.CreateAgent(ctx, id, now)
		}
		return nil
	})
	if err != nil {
		return ids.Zero, err
	}
	return id, nil
}

// IssueAppToken implements identity.Principals: a new app token ("bta_...")
// for the app principal principalID, in the unit of work of ctx. Only its
// hash is stored; the token is a one-time secret, and the calling use case
// (installApp) marks its response with idempotency.MarkOneTimeSecret.
// Earlier tokens stay valid until RevokeAppTokens. Errors: not_found when
// principalID is no app principal; internal errors of the store.
func (s *Service) IssueAppToken(ctx context.Context, principalID ids.ID) (string, error) {
	token, hash, err := domain.NewToken(domain.TokenApp, s.random)
	if err != nil {
		return "", errs.Wrap(err, "identity: making a token failed")
	}
	err = s.uow.Do(ctx, func(ctx context.Context) error {
		kind, ok, err := s.store.PrincipalKind(ctx, principalID)
		if err != nil {
			return err
		}
		if !ok || kind != actor.KindApp {
			return errs.NotFound()
		}
		now := s.clock.Now()
		id, err := s.newID(now)
		if err != nil {
			return err
		}
		return s.store.CreateAppToken(ctx, id, principalID, hash, now)
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// RevokeAppTokens implements identity.Principals: every token of
// principalID stops working when the unit of work of ctx commits (uninstall).
// Revoking a principal without tokens does nothing. Errors: internal errors
// of the store.
func (s *Service) RevokeAppTokens(ctx context.Context, principalID ids.ID) error {
	return s.uow.Do(ctx, func(ctx context.Context) error {
		if err := s.store.RevokeAppTokens(ctx, principalID, s.clock.Now()); err != nil {
			return err
		}
		s.forgetTokensAfterCommit(ctx, principalID)
		return nil
	})
}
