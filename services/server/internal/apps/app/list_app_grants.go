package app

import (
	"context"

	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// ListAppGrants returns the grants of the app appID, oldest first
// (listAppGrants, action app.grant.read: owners only, no step-up); never
// nil. An app without installation has none: grants end with the
// uninstall.
//
// Errors (*errs.Error): not_found for an unknown app and, identically, for
// anyone but an owner; internal.
func (s *Service) ListAppGrants(ctx context.Context, appID ids.ID) ([]authz.Grant, error) {
	var out []authz.Grant
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		_, a, err := s.authorizeAndLoad(ctx, authorize.AppGrantRead, appID)
		if err != nil {
			return err
		}
		out, err = s.grants.ListForPrincipal(ctx, a.PrincipalID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []authz.Grant{}
	}
	return out, nil
}
