package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// UninstallApp uninstalls the app appID (uninstallApp, action
// app.uninstall: owner with a fresh step-up; docs/spec/11-extensions.md
// 4.3). In one unit of work the current installation becomes uninstalled,
// every app token of the app principal is revoked
// (identity.Principals.RevokeAppTokens), its grants end (authz.Grants.Revoke
// for each, so a reinstalled app starts without grants), the Uninstalled
// hook of the webhook work disables the installation's subscriptions,
// app.uninstall is audited with installation_id, previous_state, state and
// grants_revoked, and app.installation.updated is appended.
//
// Errors (*errs.Error): the denials of the authorizer; not_found for an
// unknown app; conflict app_not_installed when the app has no active or
// suspended installation; internal.
func (s *Service) UninstallApp(ctx context.Context, appID ids.ID) error {
	revoked := 0
	_, err := s.changeInstallation(ctx, change{
		action: authorize.AppUninstall,
		appID:  appID,
		apply:  stateChange(domain.InstallationUninstall),
		effect: func(ctx context.Context, next apps.Installation) error {
			if err := s.principals.RevokeAppTokens(ctx, next.PrincipalID); err != nil {
				return err
			}
			n, err := s.revokeGrants(ctx, next.PrincipalID)
			if err != nil {
				return err
			}
			revoked = n
			if s.hooks != nil {
				return s.hooks.Uninstalled(ctx, next)
			}
			return nil
		},
		details: func(prev, next apps.Installation) []auditing.Detail {
			return append(stateDetails(prev, next), auditing.Int("grants_revoked", int64(revoked)))
		},
	})
	return err
}

// revokeGrants revokes every grant of principalID in the unit of work and
// returns how many there were.
func (s *Service) revokeGrants(ctx context.Context, principalID ids.ID) (int, error) {
	list, err := s.grants.ListForPrincipal(ctx, principalID)
	if err != nil {
		return 0, err
	}
	for _, g := range list {
		if err := s.grants.Revoke(ctx, principalID, g.ID); err != nil {
			return 0, err
		}
	}
	return len(list), nil
}
