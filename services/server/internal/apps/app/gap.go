package app

import (
	"context"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
)

// gap handles a head whose event left the log (D-M2-26-5): the
// subscription is disabled with cause gap, the head and every pending row
// below the lowest retained seq become dead with event_expired, and the
// audit entry names the first and last lost seq. A re-enable then goes on
// with the first retained pending row.
func (s *Deliveries) gap(ctx context.Context, t *DeliveryTarget, st *step, head PendingHead, now time.Time) error {
	minRetained, err := s.events.MinRetainedSeq(ctx)
	if err != nil {
		return err
	}
	finished, err := s.store.FinishUnsent(ctx, head.ID, apps.LastErrorEventExpired, now)
	if err != nil {
		return err
	}
	if !finished {
		return errs.Internalf("apps: the webhook head whose event left the log is not pending")
	}
	exp, err := s.store.ExpirePending(ctx, t.SubscriptionID, minRetained, now)
	if err != nil {
		return err
	}
	st.failed(failure{subscriptionID: t.SubscriptionID, seq: head.Event.Seq,
		reason: apps.LastErrorEventExpired, host: domain.TargetHost(t.URL)})
	tr, ok, err := s.setState(ctx, t.SubscriptionID, t.Installation.AppID, t.standing(), webhook.EventGap, now)
	if err != nil || !ok {
		return err
	}
	tr.fromSeq, tr.toSeq = head.Event.Seq, max(head.Event.Seq, exp.LastSeq)
	if err := s.recordTransition(ctx, tr); err != nil {
		return err
	}
	t.State = tr.To
	st.transitioned(tr)
	return nil
}
