// Package gather runs calls that arrive together as one group: a busy
// server pays the fixed cost of a group (a unit of work, a statement, a
// round trip) once for the calls that waited for it, and a quiet server's
// call runs at once (ADR 0098, ADR 0100).
//
// A Queue lets at most groups groups run at a time. A call that finds
// fewer running runs its own group, itself alone, at once; the calls that
// arrive while that many run wait, and when a group ends the calls that
// wait, up to max of them in the order they arrived, become the next
// group, which the goroutine of the first of them runs. So a group needs
// no goroutine of its own, and a call waits for at most the groups before
// its own. Calls wait only while groups groups run.
package gather

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Queue gathers the calls of one kind (T holds a call's input and its
// result, which run sets). It is safe for concurrent use.
type Queue[T any] struct {
	max, groups int
	run         func(group []*T)
	abandon     func(group []*T)

	mu      sync.Mutex
	running int
	waiting []*waiter[T]
}

// waiter is one call of Do in the queue.
type waiter[T any] struct {
	call *T
	// group is the group the call runs when it is told its turn: taken
	// from the queue, with the call first, by the group that ended.
	group []*waiter[T]
	// turn is told true once when the call is to run group, or false once
	// when the group it was in ran.
	turn chan bool
}

// New returns a queue that runs groups of up to max calls, at most
// groups of them at a time, with run: run sets the result of each call
// of its group, in whatever way T holds it. abandon (nil: nothing) is
// given the calls of a group whose run panicked, to set them a result,
// before the panic goes on in the goroutine that ran the group; the
// queue goes on with the calls that wait. It returns an error for a max
// or groups below 1 or a nil run.
func New[T any](max, groups int, run, abandon func(group []*T)) (*Queue[T], error) {
	if max < 1 || groups < 1 || run == nil {
		return nil, errors.New("gather: New needs max and groups of at least 1 and a run")
	}
	return &Queue[T]{max: max, groups: groups, run: run, abandon: abandon}, nil
}

// Do runs call in a group with the calls that wait beside it and returns
// once its group ran (run set its result).
func (q *Queue[T]) Do(call *T) {
	w := &waiter[T]{call: call, turn: make(chan bool, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, w)
	if q.running < q.groups {
		// Nothing waits while fewer groups run: the group is w alone.
		q.running++
		w.group = q.take()
		q.mu.Unlock()
	} else {
		q.mu.Unlock()
		if lead := <-w.turn; !lead {
			return
		}
	}
	group := w.group
	calls := make([]*T, len(group))
	for i, g := range group {
		calls[i] = g.call
	}

	defer func() {
		// Also after a panic of run (a bug): its calls are abandoned
		// instead of left without a result, and the queue goes on.
		r := recover()
		if r != nil && q.abandon != nil {
			q.abandon(calls)
		}
		q.handOn(group)
		if r != nil {
			panic(r)
		}
	}()
	q.run(calls)
}

// Waiting returns how many calls wait for a group to end.
func (q *Queue[T]) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// Running returns how many groups run.
func (q *Queue[T]) Running() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running
}

// take removes the next group from the queue: up to max of the calls
// that wait, in the order they arrived. The caller holds mu.
func (q *Queue[T]) take() []*waiter[T] {
	n := min(len(q.waiting), q.max)
	group := q.waiting[:n:n]
	q.waiting = append([]*waiter[T](nil), q.waiting[n:]...)
	return group
}

// handOn ends group: the calls that wait, if any, become the next group,
// which its first call runs, and the group's other calls return. The
// next group is taken here, with the lock held, so that no call is told
// its turn twice when two groups end at once.
func (q *Queue[T]) handOn(group []*waiter[T]) {
	q.mu.Lock()
	if len(q.waiting) > 0 {
		next := q.take()
		next[0].group = next
		next[0].turn <- true
	} else {
		q.running--
	}
	q.mu.Unlock()
	for _, w := range group[1:] {
		w.turn <- false
	}
}

// Context returns the context of a group's work from the contexts of its
// calls: the first call's values (its trace, its logger), cancelled by
// none of the calls, since a client that leaves must not fail the others,
// and with the latest of their deadlines (none when one has none), so the
// group is bounded like the calls it serves. stop releases it.
func Context(calls []context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx = context.WithoutCancel(calls[0])
	var latest time.Time
	for _, c := range calls {
		d, ok := c.Deadline()
		if !ok {
			return context.WithCancel(ctx)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(ctx, latest)
}
