package app

import (
	"context"
	"encoding/json"
	"time"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	eventsync "bothy/server/internal/sync"
)

// sign builds the request of a head the run is about to claim
// (D-M2-26-10; the claim fills in attempt.head, D-M2-26-80): the
// envelope of the event with the delivery field sync_epoch, the timestamp
// of this attempt, v1a signatures of every webhook_out signer (active key
// first) and, with HMAC, v1 signatures of the current generation and, inside
// webhook.secret_rotation_overlap, the previous one.
func (s *Deliveries) sign(ctx context.Context, t *DeliveryTarget, ev eventsync.Event, now time.Time) (*attempt, error) {
	epoch, err := s.syncEpoch(ctx)
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
	}, &s.signatures, now)
	if err != nil {
		return nil, err
	}
	return &attempt{
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

// syncEpoch returns instance.sync_epoch, read once per process by the
// first run that needs it (D-M2-26-66): the epoch is set when the instance
// row is created and changes only when the event log restarts, which
// finalizing a restore does with every worker stopped (docs/spec/03-data-model.md
// 6.7), so a worker never sees it change. A failed read is tried again by
// the next run.
func (s *Deliveries) syncEpoch(ctx context.Context) (ids.ID, error) {
	if e := s.epoch.Load(); e != nil {
		return *e, nil
	}
	rec, err := s.state.Load(ctx)
	if err != nil {
		return ids.Zero, err
	}
	s.epoch.Store(&rec.SyncEpoch)
	return rec.SyncEpoch, nil
}
