package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	eventsync "bothy/server/internal/sync"
)

// ListDeliveries pages a subscription's deliveries newest first by
// (event_seq, id) (listWebhookDeliveries; webhook_out.read: owners;
// D-M2-26-20), optionally with one status. q.Limit 0 means
// webhook.page_size_default; larger limits than webhook.page_size_max are
// lowered to it. Each delivery carries the event_type of its event while
// the event is in the log, and none once it left it (D-M2-26-13).
//
// Errors (*errs.Error): not_found for an unknown subscription (before
// authorize) and the authorizer's denials on its app; validation_failed
// at query/status (item enum) for an unknown status; internal.
func (w *WebhookService) ListDeliveries(ctx context.Context, q apps.DeliveryQuery) (apps.DeliveryPage, error) {
	switch q.Status {
	case "", apps.DeliveryPending, apps.DeliverySucceeded, apps.DeliveryFailed, apps.DeliveryDead:
	default:
		return apps.DeliveryPage{}, errs.Validation(errs.Field("query/status", "enum"))
	}
	if q.Limit < 1 {
		q.Limit = w.opts.PageSizeDefault
	}
	q.Limit = min(q.Limit, w.opts.PageSizeMax)
	var out apps.DeliveryPage
	err := w.uow.Do(ctx, func(ctx context.Context) error {
		if _, _, err := w.authorizeSubscription(ctx, authorize.WebhookOutRead, q.SubscriptionID); err != nil {
			return err
		}
		page, err := w.subs.Deliveries(ctx, q)
		if err != nil {
			return err
		}
		// One read of the log names every item's event type (no read per
		// item); an event that left the log leaves event_type empty.
		keys := make([]eventsync.EventKey, len(page.Items))
		for i, d := range page.Items {
			keys[i] = eventKey(d)
		}
		types, err := w.log.EventTypesByKey(ctx, keys)
		if err != nil {
			return err
		}
		for i := range page.Items {
			page.Items[i].EventType = string(types[page.Items[i].EventSeq])
		}
		out = page
		return nil
	})
	if err != nil {
		return apps.DeliveryPage{}, err
	}
	return out, nil
}
