package app

import (
	"context"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// Redeliver sends a delivery's event again with the same webhook-id
// (redeliverWebhook; webhook_out.redeliver on the delivery: owners, no
// step-up; D-M2-26-14). In one unit of work: read the
// delivery (not_found), authorize, lock its subscription and then the
// delivery (lock order), check that the event is still in the log, then:
// a pending delivery becomes due now; a succeeded, failed or dead one
// becomes pending again, due now, with last_error, response_code and
// delivered_at cleared, the attempt count kept and created_at = now, so
// the retry window of webhook.retry_max_age starts again. The job is
// scheduled while the subscription is active; a paused or disabled
// subscription keeps the delivery waiting, and strict order still holds
// (a lower pending seq goes first). Audits webhook_out.redeliver with
// delivery_id, subscription_id, event_seq and previous_status, and returns
// the delivery with its event_type.
//
// Errors (*errs.Error): not_found for an unknown delivery (before
// authorize) and the authorizer's denials; conflict event_expired when the
// event left the event log; internal.
func (w *WebhookService) Redeliver(ctx context.Context, deliveryID ids.ID) (apps.Delivery, error) {
	var out apps.Delivery
	err := w.uow.Do(ctx, func(ctx context.Context) error {
		p := actor.From(ctx)
		d, ok, err := w.subs.Delivery(ctx, deliveryID)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		res := authorize.Resource{Kind: authorize.KindWebhookDelivery, ID: deliveryID}
		if err := authorize.Check(ctx, w.az, p, authorize.WebhookOutRedeliver, res); err != nil {
			return err
		}
		sub, ok, err := w.subs.LockSubscription(ctx, d.SubscriptionID)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		if d, ok, err = w.subs.LockDelivery(ctx, deliveryID); err != nil {
			return err
		} else if !ok {
			return errs.NotFound()
		}
		eventType, retained, err := w.eventType(ctx, eventKey(d))
		if err != nil {
			return err
		}
		if !retained {
			return errs.Conflict(ReasonEventExpired)
		}
		now := w.now()
		next := d
		next.NextAttemptAt, next.UpdatedAt = now, now
		if d.Status != apps.DeliveryPending {
			next.Status, next.LastError, next.ResponseCode, next.DeliveredAt = apps.DeliveryPending, "", 0, time.Time{}
			next.CreatedAt = now
		}
		if err := w.subs.UpdateRedelivered(ctx, next); err != nil {
			return err
		}
		if sub.State == apps.SubscriptionActive {
			if err := w.jobs.Schedule(ctx, sub.ID, now); err != nil {
				return err
			}
		}
		if err := w.audit.Record(ctx, auditing.Entry{
			Action: string(authorize.WebhookOutRedeliver), Actor: p, Outcome: auditing.Allow,
			ResourceKind: string(authorize.KindWebhookDelivery), ResourceID: deliveryID,
			Details: []auditing.Detail{
				auditing.ID("delivery_id", deliveryID),
				auditing.ID("subscription_id", sub.ID),
				auditing.Int("event_seq", d.EventSeq),
				auditing.Code("previous_status", string(d.Status)),
			},
		}); err != nil {
			return err
		}
		next.EventType = eventType
		out = next
		return nil
	})
	if err != nil {
		return apps.Delivery{}, err
	}
	return out, nil
}
