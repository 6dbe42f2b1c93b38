package app

import (
	"context"

	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// DeleteAppGrant revokes the grant grantID of the app appID
// (deleteAppGrant, action app.grant.manage: owner with a fresh step-up).
// It takes effect at once: the next request of the app and the next
// webhook delivery are decided without it. Audits app.grant.manage with
// grant_id, change = deleted, level, space_id and channel_id.
//
// Errors (*errs.Error): the denials of the authorizer; not_found for an
// unknown app, for an unknown grant and for a grant of another principal
// alike; internal.
func (s *Service) DeleteAppGrant(ctx context.Context, appID, grantID ids.ID) error {
	return s.uow.Do(ctx, func(ctx context.Context) error {
		p, a, err := s.authorizeAndLoad(ctx, authorize.AppGrantManage, appID)
		if err != nil {
			return err
		}
		g, err := s.grantOf(ctx, a.PrincipalID, grantID)
		if err != nil {
			return err
		}
		if err := s.grants.Revoke(ctx, a.PrincipalID, grantID); err != nil {
			return err
		}
		return s.record(ctx, p, authorize.AppGrantManage, a.ID, grantDetails(g, "deleted")...)
	})
}

// grantOf returns the grant grantID held by principalID, or not_found.
func (s *Service) grantOf(ctx context.Context, principalID, grantID ids.ID) (authz.Grant, error) {
	list, err := s.grants.ListForPrincipal(ctx, principalID)
	if err != nil {
		return authz.Grant{}, err
	}
	for _, g := range list {
		if g.ID == grantID {
			return g, nil
		}
	}
	return authz.Grant{}, errs.NotFound()
}
