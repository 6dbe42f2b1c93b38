package app

import (
	"context"
	"math"

	"bothy/server/internal/apps/domain/webhook"
)

// HandleLost implements sync.ConsumerLossHandler (D-M2-26-5): the
// consumer webhooks fell behind sync.event_retention and the events from
// to to left the log before they became rows. Any live subscription could
// have matched one of them, so every app subscription in state active or
// paused whose installation is active or suspended is disabled with cause
// gap; its pending rows, all of events below from that left the log as
// well, become dead with event_expired; the audit entry names from_seq (the
// lowest of those rows, else from) and to_seq = to. A re-enable then goes
// on with the events the consumer reads after the loss, so it never loops.
// It runs in the round's transaction before the first HandleEvent; an
// error rolls the round back.
func (s *Deliveries) HandleLost(ctx context.Context, from, to int64) error {
	r := roundOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	// Candidates read before the loss would still show the disabled
	// subscriptions.
	clear(r.cands)
	clear(r.states)
	refs, err := s.store.LockLiveSubscriptions(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	for _, ref := range refs {
		tr, ok, err := s.setState(ctx, ref.ID, ref.AppID, webhook.Standing{State: ref.State}, webhook.EventGap, now)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		exp, err := s.store.ExpirePending(ctx, ref.ID, math.MaxInt64, now)
		if err != nil {
			return err
		}
		tr.fromSeq, tr.toSeq = from, to
		if exp.Count > 0 {
			tr.fromSeq = exp.FirstSeq
		}
		if err := s.recordTransition(ctx, tr); err != nil {
			return err
		}
		s.logTransition(ctx, tr)
	}
	return nil
}
