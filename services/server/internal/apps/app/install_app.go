package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/kernel/ids"
)

// InstallApp is the input of Service.InstallApp.
type InstallApp struct {
	// AppID is the app to install.
	AppID ids.ID
	// Scopes are the scopes to grant, a subset of the manifest's scopes;
	// nil grants every scope of the manifest (an empty slice grants none).
	Scopes []string
	// EventSubscriptions are the event types the installation may
	// subscribe to, a subset of the manifest's events that the granted
	// scopes allow; nil means every event of the manifest the granted
	// scopes allow (an empty slice means none).
	EventSubscriptions []string
}

// Installed is the result of Service.InstallApp.
type Installed struct {
	// Installation is the new active installation.
	Installation apps.Installation
	// AppToken is the app's bearer token: a one-time secret, returned only
	// here and stored only as a hash by identity.
	AppToken string
}

// InstallApp installs an app (installApp, action app.install: owner with a
// fresh step-up; docs/spec/11-extensions.md 4.1). In one unit of work it
// checks the manifest's delivery addresses against the current
// webhook.allowed_hosts again (the list may have changed since
// registration), plans the granted scopes and event subscriptions
// (domain.PlanInstallation), inserts the active installation, issues the
// app token (identity.Principals.IssueAppToken), runs the Installed hook of
// the webhook work (which creates the manifest's webhook subscription),
// audits app.install with installation_id, granted_scopes and
// event_subscriptions, and appends app.installation.updated. The response
// carries a one-time secret, so it calls idempotency.MarkOneTimeSecret: a
// replay of the request answers 409 conflict one_time_secret.
//
// Errors (*errs.Error): the denials of the authorizer (not_found for anyone
// but an owner, step_up_required for a stale step-up); not_found for an
// unknown app; the manifest errors of domain.ValidateManifest (pointers
// /manifest/..., naming the stored manifest); validation_failed from
// domain.PlanInstallation (/scopes/<i>, /event_subscriptions/<i>); conflict
// already_installed while the app has an active or suspended installation;
// internal.
func (s *Service) InstallApp(ctx context.Context, cmd InstallApp) (Installed, error) {
	var out Installed
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		p, a, err := s.authorizeAndLoad(ctx, authorize.AppInstall, cmd.AppID)
		if err != nil {
			return err
		}
		if err := domain.ValidateManifest(a.Manifest, s.opts.AllowedHosts); err != nil {
			return err
		}
		granted, subs, err := domain.PlanInstallation(a.Manifest, cmd.Scopes, cmd.EventSubscriptions)
		if err != nil {
			return err
		}
		// The unique index decides races; this read only spares the
		// common case an aborted statement.
		if _, ok, err := s.store.CurrentInstallation(ctx, a.ID, apps.NoLock); err != nil {
			return err
		} else if ok {
			return errs.Conflict(domain.ReasonAlreadyInstalled)
		}
		now := s.now()
		id, err := newID(now)
		if err != nil {
			return err
		}
		inst := apps.Installation{
			ID: id, AppID: a.ID, PrincipalID: a.PrincipalID, State: apps.InstallationActive,
			GrantedScopes: granted, EventSubscriptions: subs,
			InstalledBy: p.ID, InstalledAt: now, UpdatedAt: now,
		}
		if err := s.store.InsertInstallation(ctx, inst); err != nil {
			return err
		}
		token, err := s.principals.IssueAppToken(ctx, a.PrincipalID)
		if err != nil {
			return err
		}
		if s.hooks != nil {
			if err := s.hooks.Installed(ctx, inst, a.Manifest); err != nil {
				return err
			}
		}
		if err := s.record(ctx, p, authorize.AppInstall, a.ID,
			auditing.ID("installation_id", inst.ID),
			auditing.List("granted_scopes", granted...),
			auditing.List("event_subscriptions", subs...),
		); err != nil {
			return err
		}
		if err := s.appendUpdated(ctx, p, inst); err != nil {
			return err
		}
		out = Installed{Installation: inst, AppToken: token}
		return nil
	})
	if err != nil {
		return Installed{}, err
	}
	idempotency.MarkOneTimeSecret(ctx)
	return out, nil
}
