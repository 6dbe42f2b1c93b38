package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// UninstallApp uninstalls the app appID (uninstallApp, action
// app.uninstall: owner with a fresh step-up; docs/spec/11-extensions.md
// 4.3). In one unit of work the current installation becomes uninstalled,
// every app token of the app principal is revoked
// (identity.Principals.RevokeAppTokens), the Uninstalled hook of the webhook
// work disables the installation's subscriptions, app.uninstall is audited
// with installation_id, previous_state and state, and
// app.installation.updated is appended.
//
// Errors (*errs.Error): the denials of the authorizer; not_found for an
// unknown app; conflict app_not_installed when the app has no active or
// suspended installation; internal.
func (s *Service) UninstallApp(ctx context.Context, appID ids.ID) error {
	_, err := s.changeInstallation(ctx, change{
		action: authorize.AppUninstall,
		appID:  appID,
		apply:  stateChange(domain.InstallationUninstall),
		effect: func(ctx context.Context, next apps.Installation) error {
			if err := s.principals.RevokeAppTokens(ctx, next.PrincipalID); err != nil {
				return err
			}
			if s.hooks != nil {
				return s.hooks.Uninstalled(ctx, next)
			}
			return nil
		},
		details: stateDetails,
	})
	return err
}
