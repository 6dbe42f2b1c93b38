package domain

import (
	"slices"
	"strconv"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/errs"
)

// The conflict reasons of the installation use cases.
const (
	// ReasonAlreadyInstalled: installApp while the app has an active or
	// suspended installation.
	ReasonAlreadyInstalled = "already_installed"
	// ReasonAppNotInstalled: a change of the installation (uninstall,
	// suspend, resume, scopes, grants) while the app has none.
	ReasonAppNotInstalled = "app_not_installed"
	// ReasonInvalidStateTransition: an event that does not apply to the
	// current state, of an installation (NextInstallationState) or of a
	// webhook subscription (webhook.NextSubscriptionState).
	ReasonInvalidStateTransition = "invalid_state_transition"
)

// InstallationEvent is an owner's change of an installation's state
// (docs/spec/11-extensions.md 4.3).
type InstallationEvent string

// The installation events.
const (
	// InstallationSuspend: app.suspend.
	InstallationSuspend InstallationEvent = "suspend"
	// InstallationResume: app.resume.
	InstallationResume InstallationEvent = "resume"
	// InstallationUninstall: app.uninstall.
	InstallationUninstall InstallationEvent = "uninstall"
)

// installationTransitions is the state machine: event, then current
// state, then next state. A missing pair is rejected.
var installationTransitions = map[InstallationEvent]map[apps.InstallationState]apps.InstallationState{
	InstallationSuspend:   {apps.InstallationActive: apps.InstallationSuspended},
	InstallationResume:    {apps.InstallationSuspended: apps.InstallationActive},
	InstallationUninstall: {apps.InstallationActive: apps.InstallationUninstalled, apps.InstallationSuspended: apps.InstallationUninstalled},
}

// NextInstallationState returns the state after ev:
//
//	suspend    active -> suspended
//	resume     suspended -> active
//	uninstall  active -> uninstalled, suspended -> uninstalled
//
// An uninstalled installation changes no more: every event on it is a
// *errs.Error conflict with reason ReasonAppNotInstalled. Every other
// rejected pair (suspend of a suspended, resume of an active installation)
// is conflict with reason ReasonInvalidStateTransition, the reason of the
// subscription transitions: a no-op is refused, never silently accepted,
// so an error always means nothing to write, nothing to audit and no event.
// current is returned unchanged with every error. Unknown states and events
// are internal errors.
func NextInstallationState(current apps.InstallationState, ev InstallationEvent) (apps.InstallationState, error) {
	from, ok := installationTransitions[ev]
	if !ok {
		return current, errs.Internalf("apps: unknown installation event")
	}
	switch current {
	case apps.InstallationActive, apps.InstallationSuspended:
	case apps.InstallationUninstalled:
		return current, errs.Conflict(ReasonAppNotInstalled)
	default:
		return current, errs.Internalf("apps: unknown installation state")
	}
	next, ok := from[current]
	if !ok {
		return current, errs.Conflict(ReasonInvalidStateTransition)
	}
	return next, nil
}

// PlanInstallation returns the granted scopes and event subscriptions of a
// new installation of an app with manifest m (docs/spec/11-extensions.md
// 4.1, 5):
//
//   - granted: scopes, or every scope of the manifest when scopes is nil;
//     each must be a scope of the manifest. Stored in catalogue order.
//   - subscriptions: events, or when events is nil every event of the
//     manifest the granted scopes allow (AllowedEvents); each given event
//     must be in the manifest and allowed by the granted scopes. Stored in
//     manifest order.
//
// nil and an empty slice differ: an empty slice grants no scope or
// subscribes to no event. The error is a *errs.Error validation_failed
// listing every defect, with pointers into the installApp body:
// /scopes/<i> (duplicate, unknown_scope, not_in_manifest) and
// /event_subscriptions/<i> (duplicate, not_in_manifest, scope_missing; the
// scope check uses the valid requested scopes).
func PlanInstallation(m Manifest, scopes, events []string) (granted, subscriptions []string, err error) {
	if scopes == nil {
		scopes = m.Scopes
	}
	fields := scopeDefects("/scopes", scopes, m.Scopes)
	granted = grantable(scopes, m.Scopes)

	if events == nil {
		subscriptions = AllowedEvents(m.Events, granted)
	} else {
		seen := map[string]bool{}
		for i, ev := range events {
			p := "/event_subscriptions/" + strconv.Itoa(i)
			switch {
			case seen[ev]:
				fields = append(fields, errs.Field(p, itemDuplicate))
			case !slices.Contains(m.Events, ev):
				fields = append(fields, errs.Field(p, itemNotInManif))
			case !EventAllowed(ev, granted):
				fields = append(fields, errs.Field(p, itemScopeMissing))
			}
			seen[ev] = true
		}
		subscriptions = []string{}
		for _, ev := range m.Events {
			if slices.Contains(events, ev) {
				subscriptions = append(subscriptions, ev)
			}
		}
	}
	if len(fields) > 0 {
		return nil, nil, errs.Validation(fields...)
	}
	return granted, subscriptions, nil
}

// PlanScopes returns the installation's new granted scopes and event
// subscriptions for setAppScopes (docs/spec/11-extensions.md 4.2):
// granted = scopes (nil grants none) in catalogue order, each a scope of
// the manifest; subscriptions = current narrowed to the events the new
// scopes allow. Scopes never widen the subscriptions: an event narrowed
// away comes back only with a new installation. Errors as in
// PlanInstallation, pointers /scopes/<i>.
func PlanScopes(m Manifest, current, scopes []string) (granted, subscriptions []string, err error) {
	if fields := scopeDefects("/scopes", scopes, m.Scopes); len(fields) > 0 {
		return nil, nil, errs.Validation(fields...)
	}
	granted = grantable(scopes, m.Scopes)
	return granted, AllowedEvents(current, granted), nil
}

// grantable returns the scopes of scopes that are grantable and in within,
// in catalogue order, each once, as a fresh non-nil slice.
func grantable(scopes, within []string) []string {
	out := []string{}
	for _, s := range validDistinct(scopes) {
		if slices.Contains(within, s) {
			out = append(out, s)
		}
	}
	return out
}
