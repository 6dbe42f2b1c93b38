package app

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

// DeliverTogether runs the job apps.webhook_deliver of a consumer round
// that served several subscriptions (ADR 0089): the first step of each
// subscription's run, the lock, the read of its due heads, their events
// and its app's rights and the claim of its batch, goes into one unit of
// work for all of them, their statements travelling together
// (txn.Together) in the order of the subscriptions' ids, so that two such
// runs take the row locks they share in the same order. After the commit
// each subscription's run goes on alone, exactly as Deliver's: its sends
// run concurrently with those of the others, and it records and claims
// again in units of work of its own, so a slow or hanging receiver holds
// back its own subscription only.
//
// Every rule of a run holds per subscription as in Deliver: the lease, the
// order, the rights checked before each attempt, the chain budget, the
// lease wake-up of each claim. A failure stays with the subscriptions it
// concerns: when the shared unit of work fails, every subscription of the
// job gets a job of its own due now, and when a run fails after it, that
// subscription does; those jobs retry as Deliver's do. Only when that
// insert fails too is the error returned, and River runs the whole job
// again, which finds what each subscription's lease allows. The job was
// due at scheduledAt (DeliverScheduled).
func (s *Deliveries) DeliverTogether(ctx context.Context, subscriptionIDs []ids.ID, scheduledAt time.Time) error {
	subs := slices.Clone(subscriptionIDs)
	slices.SortFunc(subs, func(a, b ids.ID) int { return bytes.Compare(a[:], b[:]) })
	subs = slices.Compact(subs)
	chains := make([]*chain, len(subs))
	for i := range subs {
		chains[i] = s.newChain(scheduledAt)
	}
	steps := make([]*step, len(subs))
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		fns := make([]func(context.Context) error, len(subs))
		for i, sub := range subs {
			fns[i] = func(ctx context.Context) error {
				steps[i] = chains[i].begin()
				return s.step(ctx, sub, steps[i], nil)
			}
		}
		return txn.Together(ctx, fns...)
	})
	if err != nil {
		return s.handOff(ctx, subs, err)
	}
	var wg sync.WaitGroup
	failed := make([]error, len(subs))
	for i, sub := range subs {
		st := steps[i]
		s.committed(ctx, st)
		if st.next == nil && st.rateWait.IsZero() {
			continue
		}
		wg.Go(func() { failed[i] = s.run(ctx, sub, chains[i], st) })
	}
	wg.Wait()
	var again []ids.ID
	var errs []error
	for i, err := range failed {
		if err != nil {
			again, errs = append(again, subs[i]), append(errs, err)
		}
	}
	if len(again) == 0 {
		return nil
	}
	return s.handOff(ctx, again, errors.Join(errs...))
}

// handOff gives each of subs a job of its own, due now, after cause ended
// their runs in a job they shared (DeliverTogether), so that each is
// retried on its own. It returns nil when the jobs were inserted, else
// cause with the insert's error, for River to retry the shared job.
func (s *Deliveries) handOff(ctx context.Context, subs []ids.ID, cause error) error {
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		return s.scheduler.ScheduleGroups(ctx, singletons(subs), s.now())
	})
	if err != nil {
		return errors.Join(cause, err)
	}
	return nil
}

// singletons returns a group of one for each of subs.
func singletons(subs []ids.ID) [][]ids.ID {
	out := make([][]ids.ID, len(subs))
	for i, id := range subs {
		out[i] = []ids.ID{id}
	}
	return out
}

// runGroups splits subs, the subscriptions a consumer round schedules, into
// the groups whose first steps run together (DeliverTogether): as few
// groups as webhook.run_max_subscriptions allows, of sizes that differ by
// one at most, in the order of subs.
func (s *Deliveries) runGroups(subs []ids.ID) [][]ids.ID {
	if len(subs) == 0 {
		return nil
	}
	n := (len(subs) + s.opts.RunMaxSubscriptions - 1) / s.opts.RunMaxSubscriptions
	out := make([][]ids.ID, 0, n)
	for i := range n {
		out = append(out, subs[i*len(subs)/n:(i+1)*len(subs)/n])
	}
	return out
}
