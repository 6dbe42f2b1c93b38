package app

import (
	"context"
	"encoding/json"
	"time"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

// sign builds the request of a claimed head (D-M2-26-10): the
// envelope of the event with the delivery field sync_epoch, the timestamp
// of this attempt, v1a signatures of every webhook_out signer (active key
// first) and, with HMAC, v1 signatures of the current generation and, inside
// webhook.secret_rotation_overlap, the previous one.
func (s *Deliveries) sign(ctx context.Context, t *DeliveryTarget, c *chain, head ClaimedHead, ev eventsync.Event, now time.Time) (*attempt, error) {
	epoch, err := s.syncEpoch(ctx, c)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(ev.Envelope(eventsync.DeliveryFields{SyncEpoch: epoch}))
	if err != nil {
		return nil, errs.Wrap(err, "apps: encoding the webhook body failed")
	}
	ts := now.Unix()
	sig, kid, err := signWebhook(ctx, s.keys, s.master, s.opts.SecretRotationOverlap, webhookSigning{
		SubscriptionID: t.SubscriptionID, HMACEnabled: t.HMACEnabled, HMACGeneration: t.HMACGeneration,
		HMACRotatedAt: t.HMACRotatedAt, WebhookID: ev.ID, Timestamp: ts, Body: body,
	}, now)
	if err != nil {
		return nil, err
	}
	return &attempt{
		head:      head,
		eventType: string(ev.Type),
		kid:       kid,
		req: SignedRequest{
			SubscriptionID: t.SubscriptionID,
			URL:            t.URL,
			WebhookID:      ev.ID,
			Timestamp:      ts,
			Signature:      sig,
			Body:           body,
		},
	}, nil
}

// syncEpoch returns instance.sync_epoch, read once per run of the job: it
// changes only when the event log restarts (restore, which runs with the
// workers stopped), never between two deliveries of one run.
func (s *Deliveries) syncEpoch(ctx context.Context, c *chain) (ids.ID, error) {
	if c.hasEpoch {
		return c.epoch, nil
	}
	rec, err := s.state.Load(ctx)
	if err != nil {
		return ids.Zero, err
	}
	c.epoch, c.hasEpoch = rec.SyncEpoch, true
	return rec.SyncEpoch, nil
}
