package app

import (
	"context"
	"strings"

	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// RegisterApp is the input of Service.RegisterApp.
type RegisterApp struct {
	// Manifest is the app's manifest as the owner sent it.
	Manifest domain.Manifest
}

// RegisterApp registers an app from its manifest (createApp, action
// app.register: owner with a fresh step-up; docs/spec/11-extensions.md 3).
// It validates the manifest with webhook.allowed_hosts, creates the app's
// principal (identity.Principals.CreateAppPrincipal, display name = the
// manifest name without surrounding space) and the apps row, and audits
// app.register with principal_id, scopes, events, delivery_mode and the
// hosts of the delivery addresses (never their paths). Registering does not
// install.
//
// Errors (*errs.Error): the denials of the authorizer (not_found for anyone
// but an owner, step_up_required for a stale step-up); the errors of
// domain.ValidateManifest (validation_failed or webhook_host_not_allowed
// with /manifest pointers); internal.
func (s *Service) RegisterApp(ctx context.Context, cmd RegisterApp) (domain.App, error) {
	var out domain.App
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		p, err := s.authorizeApp(ctx, authorize.AppRegister, ids.Zero)
		if err != nil {
			return err
		}
		m := cmd.Manifest
		if err := domain.ValidateManifest(m, s.opts.AllowedHosts); err != nil {
			return err
		}
		m.Scopes, m.Events = nonNil(m.Scopes), nonNil(m.Events)
		now := s.now()
		id, err := newID(now)
		if err != nil {
			return err
		}
		name := strings.TrimSpace(m.Name)
		principalID, err := s.principals.CreateAppPrincipal(ctx, name)
		if err != nil {
			return err
		}
		a := domain.App{ID: id, PrincipalID: principalID, Name: name, Manifest: m, CreatedBy: p.ID, CreatedAt: now, UpdatedAt: now}
		if err := s.store.InsertApp(ctx, a); err != nil {
			return err
		}
		details := []auditing.Detail{
			auditing.ID("principal_id", principalID),
			auditing.List("scopes", m.Scopes...),
			auditing.List("events", m.Events...),
			auditing.Code("delivery_mode", string(m.Delivery.Mode)),
		}
		details = append(details, s.hostDetail("events_host", m.Delivery.EventsURL)...)
		details = append(details, s.hostDetail("interactions_host", m.Delivery.InteractionsURL)...)
		if err := s.record(ctx, p, authorize.AppRegister, id, details...); err != nil {
			return err
		}
		out = a
		return nil
	})
	return out, err
}

// hostDetail returns the audit detail key = host of a validated delivery
// address, or nothing for an empty address or a host too long for an audit
// code (SEC-AUD-5 allows codes only; the path never enters the trail).
func (s *Service) hostDetail(key, rawURL string) []auditing.Detail {
	if rawURL == "" {
		return nil
	}
	t, err := domain.ValidateTarget(rawURL, s.opts.AllowedHosts)
	if err != nil || !auditing.ValidCode(t.Host) {
		return nil
	}
	return []auditing.Detail{auditing.Code(key, t.Host)}
}
