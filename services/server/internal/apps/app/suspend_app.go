package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// SuspendApp suspends the current installation of appID (suspendApp,
// action app.suspend: owner with a fresh step-up;
// docs/spec/11-extensions.md 4.3). The app token is refused from the next
// request on (identity reads the installation's facts on every
// authentication) and webhook deliveries wait: rows are still created and
// go out in order after ResumeApp. Audits app.suspend (installation_id,
// previous_state, state) and appends app.installation.updated.
//
// Errors (*errs.Error): the denials of the authorizer; not_found for an
// unknown app; conflict app_not_installed without an active or suspended
// installation; conflict invalid_state_transition when it is suspended
// already; internal.
func (s *Service) SuspendApp(ctx context.Context, appID ids.ID) (apps.Installation, error) {
	return s.changeInstallation(ctx, change{
		action:  authorize.AppSuspend,
		appID:   appID,
		apply:   stateChange(domain.InstallationSuspend),
		details: stateDetails,
	})
}
