package app

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/gopool"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

// DeliverTogether runs the job apps.webhook_deliver of a consumer round
// that served several subscriptions (ADR 0089): their runs take their
// units of work together. The first step of every run, the lock, the read
// of its due heads, their events and its app's rights and the claim of its
// batch, goes into one unit of work for all of them, their statements
// travelling together (txn.Together) in the order of the subscriptions'
// ids, so that two such units of work take the row locks they share in
// the same order. Then each run sends its batch on its own, concurrently
// with the others, and asks for its next step (the record and the next
// claim) as its answers are in: the steps asked for while a unit of work
// of the job is running share the next one (sharedSteps), so runs whose
// answers arrive together record together, and a slow or hanging
// receiver holds back only its own subscription, which records when its
// answer arrives. A step asked while other runs still send waits for
// their steps up to webhook.run_gather_pause (D-M2-26-90), so that runs
// whose answers arrive within it share the unit of work as well.
//
// Every rule of a run holds per subscription as in Deliver: the lease, the
// order, the rights checked before each attempt, the chain budget, the
// lease wake-up of each claim. A failure stays with the subscriptions it
// concerns: when a shared unit of work fails, each of its runs takes that
// step again in a unit of work of its own (stepAlone), and a run whose own
// step fails gets a job of its own due now, which retries as Deliver's
// do. Only when that insert fails too is the error returned, and River
// runs the whole job again, which finds what each subscription's lease
// allows. The job was due at scheduledAt (DeliverScheduled).
func (s *Deliveries) DeliverTogether(ctx context.Context, subscriptionIDs []ids.ID, scheduledAt time.Time) error {
	subs := slices.Clone(subscriptionIDs)
	slices.SortFunc(subs, ids.Compare)
	subs = slices.Compact(subs)
	first := make([]*stepAsk, len(subs))
	for i, sub := range subs {
		first[i] = &stepAsk{sub: sub, c: s.newChain(sub, scheduledAt)}
	}
	g := &sharedSteps{s: s, asks: make(chan *stepAsk), ended: make(chan struct{}, 1)}
	g.running.Store(int64(len(first)))
	g.together(ctx, first)
	// The server of the steps and every run on goroutines that outlive
	// them (ADR 0109): each goes deep and would grow a new goroutine's
	// stack.
	served := make(chan struct{})
	gopool.Go(func() {
		defer close(served)
		g.serve(ctx)
	})
	var wg sync.WaitGroup
	failed := make([]error, len(subs))
	for i, a := range first {
		wg.Add(1)
		gopool.Go(func() {
			defer wg.Done()
			defer g.end()
			// A run of a job of its own that panics fails its job (River
			// recovers it); here it fails only its own run.
			defer func() {
				if r := recover(); r != nil {
					failed[i] = panicked(r)
				}
			}()
			st, err := a.st, a.err
			if errors.Is(err, errStepAlone) {
				st, err = s.stepAlone(ctx, a.sub, a.c, nil)
			}
			if err == nil {
				err = s.run(ctx, a.sub, a.c, st, g.step)
			}
			failed[i] = err
		})
	}
	wg.Wait()
	close(g.asks)
	<-served
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

// errStepAlone tells a run of DeliverTogether that the unit of work it
// shared failed and rolled back: the run takes the step again alone.
var errStepAlone = errors.New("apps: the shared unit of work failed")

// stepAsk is a run's request for its next step in a job of several
// subscriptions, and its answer: the committed step, or errStepAlone.
type stepAsk struct {
	sub  ids.ID
	c    *chain
	last *sentBatch
	st   *step
	err  error
	// done is closed once st or err is set.
	done chan struct{}
}

// sharedSteps runs the steps the runs of one DeliverTogether ask for:
// each unit of work takes every step asked for by the time it starts,
// and those asked within webhook.run_gather_pause while other runs still
// send (gather).
type sharedSteps struct {
	s    *Deliveries
	asks chan *stepAsk

	// running counts the runs of the job that have not ended.
	running atomic.Int64
	// ended wakes a gather when a run ended; it holds at most one wake-up.
	ended chan struct{}
}

// end notes that a run of the job ended, so a gather no longer waits for
// its step.
func (g *sharedSteps) end() {
	g.running.Add(-1)
	select {
	case g.ended <- struct{}{}:
	default:
	}
}

// step is the stepper of a run of DeliverTogether: it asks for the step
// and waits for its answer; after a failed shared unit of work it takes
// the step alone, with its own ctx (which a run whose job ended keeps
// uncancelled to record an answer that arrived).
func (g *sharedSteps) step(ctx context.Context, sub ids.ID, c *chain, last *sentBatch) (*step, error) {
	a := &stepAsk{sub: sub, c: c, last: last, done: make(chan struct{})}
	g.asks <- a
	<-a.done
	if a.err != nil {
		return g.s.stepAlone(ctx, sub, c, last)
	}
	return a.st, nil
}

// serve answers the asks until the channel is closed, which
// DeliverTogether does once every run ended, so no ask is pending then:
// it waits for one, gathers the others (gather) and runs them in one unit
// of work.
func (g *sharedSteps) serve(ctx context.Context) {
	for a := range g.asks {
		asks := g.gather(ctx, a)
		slices.SortFunc(asks, func(x, y *stepAsk) int { return ids.Compare(x.sub, y.sub) })
		g.together(ctx, asks)
		for _, a := range asks {
			close(a.done)
		}
	}
}

// gather returns a with every other step already asked and, while runs
// that have not ended are still sending, those asked within
// webhook.run_gather_pause (D-M2-26-90): with slow receivers the answers
// of a job's runs arrive apart, and each step that goes alone pays a unit
// of work of its own (its lock, the app's rights, its claim, its commit).
// The wait ends as soon as every run that has not ended asked, so a job
// whose answers arrive together, or a job of one run, waits for nothing;
// it ends at the pause or when ctx ends otherwise. The channel cannot
// close meanwhile: a's run waits for its answer.
func (g *sharedSteps) gather(ctx context.Context, a *stepAsk) []*stepAsk {
	asks := []*stepAsk{a}
asked:
	for {
		select {
		case b := <-g.asks:
			asks = append(asks, b)
		default:
			break asked
		}
	}
	pause := g.s.opts.RunGatherPause
	if pause <= 0 || int64(len(asks)) >= g.running.Load() {
		return asks
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	for int64(len(asks)) < g.running.Load() {
		select {
		case b := <-g.asks:
			asks = append(asks, b)
		case <-g.ended:
		case <-t.C:
			return asks
		case <-ctx.Done():
			return asks
		}
	}
	return asks
}

// together runs the steps of asks, in the order of asks, in one unit of
// work, and sets each ask's step, or errStepAlone for all of them when the
// unit of work failed or panicked (rolled back either way), so each run
// takes its step again alone. When a run asks for its first step (a lock
// and a claim), one statement locks the subscriptions of every ask in the
// order of their ids and reads the heads, and one round trip reads the
// events and the apps' rights of the first steps' claims ahead
// (readAhead, D-M2-26-76). Then every step goes on in a function of
// txn.Together of its own up to its first write: the records the runs
// computed are written with one statement and each run goes on from
// there (recordPending, D-M2-26-78); the claims the runs decided on are
// made with one statement (claimPending, D-M2-26-77).
func (g *sharedSteps) together(ctx context.Context, asks []*stepAsk) {
	err := g.s.uow.Do(ctx, func(ctx context.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = panicked(r)
			}
		}()
		locked, err := g.lockAsks(ctx, asks)
		if err != nil {
			return err
		}
		fns := make([]func(context.Context) error, len(asks))
		sts := make([]*step, len(asks))
		for i, a := range asks {
			a.st = a.c.begin()
			a.st.together = true
			sts[i] = a.st
			if a.last != nil {
				fns[i] = func(ctx context.Context) error { return g.s.step(ctx, a.sub, a.st, a.last) }
				continue
			}
			fns[i] = func(ctx context.Context) error {
				if l, found := locked[a.sub]; found {
					return g.s.claimLocked(ctx, a.st, l)
				}
				return nil
			}
		}
		if err := txn.Together(ctx, fns...); err != nil {
			return err
		}
		if err := g.s.recordPending(ctx, sts); err != nil {
			return err
		}
		return g.s.claimPending(ctx, sts)
	})
	for _, a := range asks {
		if err != nil {
			a.st, a.err = nil, errStepAlone
			continue
		}
		g.s.committed(ctx, a.st)
	}
}

// lockAsks locks, when any of asks is a run's first step, the
// subscriptions of all asks with one statement, in the order of their ids
// (the order of asks), so the records of the other asks find their locks
// taken and two units of work lock the subscriptions they share in the
// same order; and reads ahead what the first steps' claims read. It
// returns the locked subscriptions of the first steps by id, and nil when
// there is none.
func (g *sharedSteps) lockAsks(ctx context.Context, asks []*stepAsk) (map[ids.ID]LockedTarget, error) {
	subs := make([]ids.ID, 0, len(asks))
	var first []ids.ID
	chains := map[ids.ID]*chain{}
	for _, a := range asks {
		subs = append(subs, a.sub)
		if a.last == nil {
			first = append(first, a.sub)
			chains[a.sub] = a.c
		}
	}
	if len(first) == 0 {
		return nil, nil
	}
	all, err := g.s.lockFirst(ctx, subs, first)
	if err != nil {
		return nil, err
	}
	locked := make(map[ids.ID]LockedTarget, len(all))
	for _, l := range all {
		locked[l.Target.SubscriptionID] = l
	}
	return locked, g.s.readAhead(ctx, locked, chains)
}

// panicked is the error of a run, or of a unit of work shared by runs,
// that panicked with r.
func panicked(r any) error {
	return errs.Internalf("apps: a delivery run panicked: %v", r)
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
