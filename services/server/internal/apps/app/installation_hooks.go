package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
)

// Installed implements InstallationHooks (installApp, D-M2-26-15): when
// the manifest delivers by webhook, the new installation gets one
// subscription to delivery.events_url for its event_subscriptions, without
// HMAC, created by the installing owner, after authorize(webhook_out.manage)
// and with its own audit entry (change created) in the install's unit of
// work. An installation without event subscriptions gets none (a
// subscription needs at least one event type).
//
// Errors (*errs.Error): the authorizer's denials; the target errors of
// domain.ValidateTarget when webhook.allowed_hosts no longer lists the
// address; internal.
func (w *WebhookService) Installed(ctx context.Context, inst apps.Installation, m domain.Manifest) error {
	if m.Delivery.Mode != domain.DeliveryWebhook || len(inst.EventSubscriptions) == 0 {
		return nil
	}
	return w.uow.Do(ctx, func(ctx context.Context) error {
		p := actor.From(ctx)
		res := authorize.Resource{Kind: authorize.KindApp, ID: inst.AppID}
		if err := authorize.Check(ctx, w.az, p, authorize.WebhookOutManage, res); err != nil {
			return err
		}
		target, err := w.validate(proposal{url: &m.Delivery.EventsURL, eventTypes: &inst.EventSubscriptions,
			granted: inst.EventSubscriptions})
		if err != nil {
			return err
		}
		_, err = w.insert(ctx, p, inst, target, apps.CreateSubscription{AppID: inst.AppID, EventTypes: inst.EventSubscriptions}, nil)
		return err
	})
}

// Uninstalled implements InstallationHooks (uninstallApp, D-M2-26-15):
// every active or paused subscription of the installation becomes disabled
// with disabled_at = now, in the uninstall's unit of work. The audit entry
// of app.uninstall covers it.
//
// Errors: internal.
func (w *WebhookService) Uninstalled(ctx context.Context, inst apps.Installation) error {
	return w.uow.Do(ctx, func(ctx context.Context) error {
		subs, err := w.subs.LockInstallationSubscriptions(ctx, inst.ID)
		if err != nil {
			return err
		}
		now := w.now()
		for _, s := range subs {
			next, _, ok, err := webhook.Standing{State: s.State, DisabledAt: s.DisabledAt}.Apply(webhook.EventUninstall, now)
			if err != nil {
				return err
			}
			if !ok {
				continue // disabled already
			}
			s.State, s.DisabledAt, s.UpdatedAt = next.State, next.DisabledAt, now
			if err := w.subs.UpdateSubscription(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// Resumed implements InstallationHooks (resumeApp): ResumeInstallation.
func (w *WebhookService) Resumed(ctx context.Context, inst apps.Installation) error {
	return w.ResumeInstallation(ctx, inst.ID)
}
