package app

import (
	"context"
	"log/slog"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
)

// Stalled handles a delivery job of subscriptionID whose last run failed
// with cause (D-M2-26-42): an error on the server's side that lasted
// through every run River gave the job (webhook.job_max_attempts), for
// example a stored event the rights check cannot read or a signing key
// that does not open. Without it the head would stay pending with no
// last_error, no job and no signal. In one unit of work, under the
// subscription's row lock: the head names last_error internal_error, stays
// pending (the state machine is unchanged: no failure is counted, nothing
// was sent) and is due again webhook.retry_backoff_cap later, with a job
// scheduled for then while the subscription is active. It counts
// bothy.webhook.deliveries.stalled and logs "webhook delivery stalled" at
// error level with the subscription, the seq and the
// class of cause (never its text, which may carry data).
//
// Errors: the store's and the scheduler's, internal.
func (s *Deliveries) Stalled(ctx context.Context, subscriptionID ids.ID, cause error) error {
	var seq int64
	var marked bool
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		l, ok, err := s.lockTarget(ctx, subscriptionID, 0)
		if err != nil || !ok {
			return err
		}
		now := s.now()
		next := now.Add(s.opts.Retry.Cap)
		if seq, marked, err = s.store.MarkHeadStalled(ctx, subscriptionID, next, now); err != nil || !marked {
			return err
		}
		if l.Target.State != apps.SubscriptionActive {
			return nil
		}
		return s.scheduler.Schedule(ctx, subscriptionID, next)
	})
	if err != nil {
		return err
	}
	if marked {
		s.metrics.stalledHead(ctx)
		s.log.ErrorContext(ctx, "webhook delivery stalled",
			slog.String(string(attr.WebhookSubscriptionID), subscriptionID.String()),
			slog.Int64(string(attr.EventSeq), seq),
			slog.String(string(attr.Reason), string(apps.LastErrorInternal)),
			otel.ErrorAttr(cause))
	}
	return nil
}
