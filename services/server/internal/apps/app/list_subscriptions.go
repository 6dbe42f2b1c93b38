package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// ListSubscriptions lists every subscription of every installation of the
// app, ordered by created_at, then id (listWebhookSubscriptions;
// webhook_out.read: owners). The result is never nil.
//
// Errors (*errs.Error): the authorizer's denials (not_found for anyone but
// an owner); not_found for an unknown app; internal.
func (w *WebhookService) ListSubscriptions(ctx context.Context, appID ids.ID) ([]apps.Subscription, error) {
	var out []apps.Subscription
	err := w.uow.Do(ctx, func(ctx context.Context) error {
		if err := w.authorizeApp(ctx, actor.From(ctx), authorize.WebhookOutRead, appID); err != nil {
			return err
		}
		var err error
		out, err = w.subs.AppSubscriptions(ctx, appID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
