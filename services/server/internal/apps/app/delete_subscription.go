package app

import (
	"context"

	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// DeleteSubscription deletes a subscription with its deliveries
// (deleteWebhookSubscription; webhook_out.manage: owner with a fresh
// step-up) and audits webhook_out.manage (change deleted). There is no
// tombstone: a second delete is not_found.
//
// Errors (*errs.Error): not_found for an unknown subscription (before
// authorize) and the authorizer's denials on its app; internal.
func (w *WebhookService) DeleteSubscription(ctx context.Context, id ids.ID) error {
	return w.uow.Do(ctx, func(ctx context.Context) error {
		p, sub, err := w.authorizeSubscription(ctx, authorize.WebhookOutManage, id)
		if err != nil {
			return err
		}
		ok, err := w.subs.DeleteSubscription(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		return w.recordManage(ctx, p, sub, webhook.ChangeDeleted)
	})
}
