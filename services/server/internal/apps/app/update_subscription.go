package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
)

// UpdateSubscription changes a subscription (updateWebhookSubscription;
// webhook_out.manage: owner with a fresh step-up). Only the fields of cmd
// that are set change; a command that changes nothing writes nothing and
// returns the subscription as it is. In one unit of work: read the
// subscription (not_found), authorize on its app, lock its installation
// FOR SHARE and the subscription FOR UPDATE (lock order), then:
//
//   - URL, EventTypes and MaxPerSecond are validated as at creation; a
//     MaxPerSecond of 0 removes the limit (ADR 0081);
//   - State paused pauses an active or disabled subscription (disabled_at
//     cleared); State active resumes a paused or re-enables a disabled one:
//     consecutive_failures = 0, disabled_at cleared, the head delivery due
//     now and its job scheduled (D-M2-26-27, D-M2-26-29); a State equal to
//     the current one changes nothing;
//   - RotateHMACSecret raises hmac_generation, sets hmac_rotated_at = now
//     and returns the new secret once (marked a one-time secret); the
//     delivery job signs with the previous generation as well for
//     webhook.secret_rotation_overlap.
//
// Each kind of change writes one audit entry webhook_out.manage, in the
// order updated, paused or resumed, rotated.
//
// Errors (*errs.Error): not_found for an unknown subscription (before
// authorize) and the authorizer's denials on its app, so anyone but an
// owner gets the same not_found; conflict app_not_installed when the
// installation was uninstalled; webhook_host_not_allowed or
// validation_failed with /url, /event_types/<i>, /max_per_second (item
// maximum), /state (item enum) and /rotate_hmac_secret (item
// hmac_not_enabled); internal.
func (w *WebhookService) UpdateSubscription(ctx context.Context, cmd apps.UpdateSubscription) (apps.SubscriptionWithSecret, error) {
	return w.withSecret(ctx, cmd.RotateHMACSecret, func(ctx context.Context, master []byte) (apps.SubscriptionWithSecret, error) {
		p, cur, err := w.authorizeSubscription(ctx, authorize.WebhookOutManage, cmd.ID)
		if err != nil {
			return apps.SubscriptionWithSecret{}, err
		}
		if cmd.URL == nil && cmd.EventTypes == nil && cmd.State == nil && !cmd.RotateHMACSecret && cmd.MaxPerSecond == nil {
			return apps.SubscriptionWithSecret{Subscription: cur}, nil
		}
		inst, ok, err := w.apps.Installation(ctx, cur.AppInstallationID, apps.ForShare)
		if err != nil {
			return apps.SubscriptionWithSecret{}, err
		}
		if !ok || !inst.Live() {
			return apps.SubscriptionWithSecret{}, errs.Conflict(domain.ReasonAppNotInstalled)
		}
		sub, ok, err := w.subs.LockSubscription(ctx, cmd.ID)
		if err != nil {
			return apps.SubscriptionWithSecret{}, err
		}
		if !ok {
			return apps.SubscriptionWithSecret{}, errs.NotFound()
		}
		return w.change(ctx, p, sub, inst, cmd, master)
	})
}

// change applies cmd to the locked subscription sub of the live
// installation inst: it validates the parts cmd sets, asks the rule what
// they change (webhook.PlanUpdate), writes the result, makes the head due
// on a resume and audits each kind of change.
func (w *WebhookService) change(ctx context.Context, p actor.Principal, sub apps.Subscription, inst apps.Installation,
	cmd apps.UpdateSubscription, master []byte) (apps.SubscriptionWithSecret, error) {
	target, err := w.validate(proposal{url: cmd.URL, eventTypes: cmd.EventTypes, maxPerSecond: cmd.MaxPerSecond,
		granted: inst.EventSubscriptions, rotateWithoutHMAC: cmd.RotateHMACSecret && !sub.HMACEnabled})
	if err != nil {
		return apps.SubscriptionWithSecret{}, err
	}
	u := webhook.Update{EventTypes: cmd.EventTypes, State: cmd.State, RotateHMACSecret: cmd.RotateHMACSecret,
		MaxPerSecond: cmd.MaxPerSecond}
	if cmd.URL != nil {
		u.URL = &target.URL
	}
	now := w.now()
	plan, err := webhook.PlanUpdate(sub, u, now)
	if err != nil {
		return apps.SubscriptionWithSecret{}, err
	}
	if len(plan.Changes) == 0 {
		return apps.SubscriptionWithSecret{Subscription: sub}, nil
	}
	next := plan.Next
	if err := w.subs.UpdateSubscription(ctx, next); err != nil {
		return apps.SubscriptionWithSecret{}, err
	}
	if plan.Resumed {
		if err := w.makeHeadDue(ctx, next.ID, now); err != nil {
			return apps.SubscriptionWithSecret{}, err
		}
	}
	for _, c := range plan.Changes {
		if err := w.recordManage(ctx, p, next, c); err != nil {
			return apps.SubscriptionWithSecret{}, err
		}
	}
	out := apps.SubscriptionWithSecret{Subscription: next}
	if plan.Rotated {
		out.HMACSecret = webhook.FormatSecret(webhook.DeriveHMACKey(master, sub.ID, next.HMACGeneration))
	}
	return out, nil
}
