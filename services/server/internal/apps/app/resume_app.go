package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// ResumeApp resumes the suspended installation of appID (resumeApp, action
// app.resume: owner with a fresh step-up; docs/spec/11-extensions.md 4.3).
// The app token works again and, through the Resumed hook of the webhook
// work in the same unit of work, the waiting webhook deliveries become due
// and go out in order. Audits app.resume (installation_id, previous_state,
// state) and appends app.installation.updated.
//
// Errors (*errs.Error): the denials of the authorizer; not_found for an
// unknown app; conflict app_not_installed without an active or suspended
// installation; conflict invalid_state_transition when it is active
// already; internal.
func (s *Service) ResumeApp(ctx context.Context, appID ids.ID) (apps.Installation, error) {
	return s.changeInstallation(ctx, change{
		action: authorize.AppResume,
		appID:  appID,
		apply:  stateChange(domain.InstallationResume),
		effect: func(ctx context.Context, next apps.Installation) error {
			if s.hooks != nil {
				return s.hooks.Resumed(ctx, next)
			}
			return nil
		},
		details: stateDetails,
	})
}
