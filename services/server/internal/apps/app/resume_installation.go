package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/ids"
)

// ResumeInstallation makes the head delivery of each active subscription of
// the installation due now and schedules its job (app.resume,
// D-M2-26-15). It runs in the caller's unit of work (or its own when
// there is none) and does not authorize: the caller decided app.resume.
// The subscriptions are locked FOR UPDATE after the installation the
// caller holds (lock order); a subscription without a pending delivery
// gets no job.
//
// Errors: internal.
func (w *WebhookService) ResumeInstallation(ctx context.Context, installationID ids.ID) error {
	return w.uow.Do(ctx, func(ctx context.Context) error {
		subs, err := w.subs.LockInstallationSubscriptions(ctx, installationID)
		if err != nil {
			return err
		}
		now := w.now()
		for _, s := range subs {
			if s.State != apps.SubscriptionActive {
				continue
			}
			if err := w.makeHeadDue(ctx, s.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
}
