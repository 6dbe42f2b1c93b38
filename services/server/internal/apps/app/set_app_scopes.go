package app

import (
	"context"
	"slices"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// SetAppScopes is the input of Service.SetAppScopes.
type SetAppScopes struct {
	// AppID is the installed app.
	AppID ids.ID
	// Scopes replace the granted scopes; a subset of the manifest's
	// scopes (nil and empty grant none).
	Scopes []string
}

// SetAppScopes replaces the granted scopes of the current installation of
// an app (setAppScopes, action app.set_scopes: owner with a fresh step-up;
// docs/spec/11-extensions.md 4.2, 5). The event subscriptions are narrowed
// to what the new scopes allow (domain.PlanScopes); a removed scope takes
// effect at once, for the app token and for webhook deliveries already
// queued (both read the current scopes). A change is audited as
// app.set_scopes (installation_id, previous_scopes, granted_scopes,
// event_subscriptions) and appends app.installation.updated; a request that
// changes nothing writes nothing and returns the installation.
//
// Errors (*errs.Error): the denials of the authorizer; not_found for an
// unknown app; validation_failed (/scopes/<i>: duplicate, unknown_scope,
// not_in_manifest); conflict app_not_installed without an active or
// suspended installation; internal.
func (s *Service) SetAppScopes(ctx context.Context, cmd SetAppScopes) (apps.Installation, error) {
	return s.changeInstallation(ctx, change{
		action: authorize.AppSetScopes,
		appID:  cmd.AppID,
		apply: func(cur apps.Installation, a domain.App) (apps.Installation, bool, error) {
			granted, subs, err := domain.PlanScopes(a.Manifest, cur.EventSubscriptions, cmd.Scopes)
			if err != nil {
				return cur, false, err
			}
			if slices.Equal(granted, cur.GrantedScopes) && slices.Equal(subs, cur.EventSubscriptions) {
				return cur, false, nil
			}
			next := cur
			next.GrantedScopes, next.EventSubscriptions = granted, subs
			return next, true, nil
		},
		details: func(prev, next apps.Installation) []auditing.Detail {
			return []auditing.Detail{
				auditing.List("previous_scopes", prev.GrantedScopes...),
				auditing.List("granted_scopes", next.GrantedScopes...),
				auditing.List("event_subscriptions", next.EventSubscriptions...),
			}
		},
	})
}
