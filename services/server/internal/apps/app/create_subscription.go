package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
)

// CreateSubscription subscribes the current installation of cmd.AppID
// (createWebhookSubscription; webhook_out.manage: owner with a fresh
// step-up). In one unit of work: authorize on the app; not_found for an
// unknown app; lock the current installation FOR SHARE (conflict
// app_not_installed without an active or suspended one); validate the URL
// and the event types against webhook.allowed_hosts and the installation's
// event_subscriptions; insert the active subscription with the kid of the
// active webhook_out key; audit webhook_out.manage (change created). With
// EnableHMAC the result carries the generation-0 secret once and the
// response is marked a one-time secret, so an idempotent replay answers 409
// conflict one_time_secret instead of repeating it.
//
// Errors (*errs.Error): the authorizer's denials (not_found for anyone but
// an owner, step_up_required); not_found; conflict app_not_installed;
// webhook_host_not_allowed (every defect a host or port outside the list)
// or validation_failed with the pointers /url and /event_types/<i> (item
// codes of domain.ValidateTarget and domain.ValidateEventTypes:
// not_subscribable, not_granted, duplicate) and /max_per_second (item
// maximum above webhook.rate_limit_max); internal.
func (w *WebhookService) CreateSubscription(ctx context.Context, cmd apps.CreateSubscription) (apps.SubscriptionWithSecret, error) {
	return w.withSecret(ctx, cmd.EnableHMAC, func(ctx context.Context, master []byte) (apps.SubscriptionWithSecret, error) {
		p := actor.From(ctx)
		if err := w.authorizeApp(ctx, p, authorize.WebhookOutManage, cmd.AppID); err != nil {
			return apps.SubscriptionWithSecret{}, err
		}
		inst, err := w.installationOf(ctx, cmd.AppID)
		if err != nil {
			return apps.SubscriptionWithSecret{}, err
		}
		target, err := w.validate(proposal{url: &cmd.URL, eventTypes: &cmd.EventTypes, maxPerSecond: &cmd.MaxPerSecond,
			granted: inst.EventSubscriptions})
		if err != nil {
			return apps.SubscriptionWithSecret{}, err
		}
		return w.insert(ctx, p, inst, target, cmd, master)
	})
}
