package gather_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/gather"
)

// call is one call of Queue.Do in the tests: its name, and the group it
// ran in, set by the run of the queue.
type call struct {
	name  string
	group []string
}

// held is a queue whose groups wait for release before they end, so the
// test can line calls up behind them.
type held struct {
	q       *gather.Queue[call]
	mu      sync.Mutex
	groups  [][]string
	started chan []string
	release chan struct{}
}

func newHeld(t *testing.T, max, groups int) *held {
	t.Helper()
	h := &held{started: make(chan []string, 100), release: make(chan struct{})}
	q, err := gather.New(max, groups, func(group []*call) {
		names := make([]string, len(group))
		for i, c := range group {
			names[i] = c.name
		}
		h.started <- names
		<-h.release
		h.mu.Lock()
		h.groups = append(h.groups, names)
		h.mu.Unlock()
		for _, c := range group {
			c.group = names
		}
	}, nil)
	require.NoError(t, err)
	h.q = q
	return h
}

// do calls Do with a call named name in the background and returns the
// channel its call arrives on once Do returned.
func (h *held) do(name string) chan *call {
	done := make(chan *call, 1)
	go func() {
		c := &call{name: name}
		h.q.Do(c)
		done <- c
	}()
	return done
}

func (h *held) waitFor(t *testing.T, waiting int) {
	t.Helper()
	require.Eventually(t, func() bool { return h.q.Waiting() == waiting }, 3*time.Second, time.Millisecond)
}

func receive[T any](t *testing.T, c chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(3 * time.Second):
		t.Fatal("nothing arrived")
		panic("unreachable")
	}
}

// TestCallsThatArriveWhileAGroupRunsGoTogether: a call on an idle queue
// runs alone at once; the calls that arrive while it runs wait and then
// run as one group, in the order they arrived, and each Do returns once
// its own group ran.
func TestCallsThatArriveWhileAGroupRunsGoTogether(t *testing.T) {
	t.Parallel()
	h := newHeld(t, 32, 1)
	alex := h.do("Alex")
	require.Equal(t, []string{"Alex"}, receive(t, h.started))
	sam := h.do("Sam")
	h.waitFor(t, 1)
	robin := h.do("Robin")
	h.waitFor(t, 2)
	h.release <- struct{}{}
	require.Equal(t, []string{"Alex"}, receive(t, alex).group)
	require.Equal(t, []string{"Sam", "Robin"}, receive(t, h.started))
	h.release <- struct{}{}
	require.Equal(t, []string{"Sam", "Robin"}, receive(t, sam).group)
	require.Equal(t, []string{"Sam", "Robin"}, receive(t, robin).group)
	require.Zero(t, h.q.Waiting())
}

// TestGroupsHoldAtMostMaxCalls: the calls beyond max wait for the next
// group.
func TestGroupsHoldAtMostMaxCalls(t *testing.T) {
	t.Parallel()
	h := newHeld(t, 2, 1)
	h.do("first")
	receive(t, h.started)
	for i, name := range []string{"a", "b", "c"} {
		h.do(name)
		h.waitFor(t, i+1)
	}
	h.release <- struct{}{}
	require.Equal(t, []string{"a", "b"}, receive(t, h.started))
	h.release <- struct{}{}
	require.Equal(t, []string{"c"}, receive(t, h.started))
	h.release <- struct{}{}
}

// TestAtMostGroupsGroupsRunAtOnce: a call runs at once while fewer than
// groups groups run, and waits while that many do.
func TestAtMostGroupsGroupsRunAtOnce(t *testing.T) {
	t.Parallel()
	h := newHeld(t, 32, 2)
	h.do("one")
	h.do("two")
	receive(t, h.started)
	receive(t, h.started)
	h.do("three")
	h.waitFor(t, 1)
	h.release <- struct{}{}
	require.Equal(t, []string{"three"}, receive(t, h.started))
	h.release <- struct{}{}
	h.release <- struct{}{}
}

// TestManyCallsAtOnceAreAllRunOnce: calls from many goroutines, in small
// groups of which several end at the same moment, each run exactly once
// and all return (a hand-over that told a call its turn twice would run
// it twice or stall the queue).
func TestManyCallsAtOnceAreAllRunOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	runs := map[*call]int{}
	q, err := gather.New(2, 3, func(group []*call) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range group {
			runs[c]++
		}
	}, nil)
	require.NoError(t, err)
	const callers, each = 12, 50
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				q.Do(&call{})
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	receive(t, done)
	require.Len(t, runs, callers*each)
	for _, n := range runs {
		require.Equal(t, 1, n)
	}
}

// TestAGroupThatPanickedIsAbandonedAndTheQueueGoesOn: the calls of a
// group whose run panicked are handed to abandon, the panic reaches the
// goroutine that ran the group, and the calls waiting meanwhile run.
func TestAGroupThatPanickedIsAbandonedAndTheQueueGoesOn(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var abandoned []string
	q, err := gather.New(32, 1, func(group []*call) {
		<-release
		if group[0].name == "boom" {
			panic("a bug")
		}
		for _, c := range group {
			c.group = []string{"ran"}
		}
	}, func(group []*call) {
		for _, c := range group {
			abandoned = append(abandoned, c.name)
		}
	})
	require.NoError(t, err)
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		q.Do(&call{name: "boom"})
	}()
	require.Eventually(t, func() bool { return q.Running() == 1 }, 3*time.Second, time.Millisecond)
	later := make(chan *call, 1)
	go func() {
		c := &call{name: "later"}
		q.Do(c)
		later <- c
	}()
	require.Eventually(t, func() bool { return q.Waiting() == 1 }, 3*time.Second, time.Millisecond)
	release <- struct{}{}
	require.Equal(t, "a bug", receive(t, panicked))
	require.Equal(t, []string{"boom"}, abandoned)
	release <- struct{}{}
	require.Equal(t, []string{"ran"}, receive(t, later).group)
}

func TestNewRefusesNoMaxOrGroupsOrRun(t *testing.T) {
	t.Parallel()
	run := func([]*call) {}
	for _, tc := range []struct{ max, groups int }{{0, 1}, {1, 0}} {
		_, err := gather.New(tc.max, tc.groups, run, nil)
		require.Error(t, err)
	}
	_, err := gather.New[call](1, 1, nil, nil)
	require.Error(t, err)
}

// TestContextKeepsTheFirstValuesNoCancelAndTheLatestDeadline: a group's
// context has the values of its first call's, ends with none of the
// calls' cancels, and ends at the latest of their deadlines, or never
// when one has none.
func TestContextKeepsTheFirstValuesNoCancelAndTheLatestDeadline(t *testing.T) {
	t.Parallel()
	type key struct{}
	first, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "Alex"))
	early, cancelEarly := context.WithDeadline(context.Background(), time.Now().Add(time.Minute))
	defer cancelEarly()
	late, cancelLate := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancelLate()
	cancel()

	ctx, stop := gather.Context([]context.Context{first, early, late})
	defer stop()
	require.NoError(t, ctx.Err(), "the first call's cancel does not end the group")
	require.Equal(t, "Alex", ctx.Value(key{}))
	_, ok := ctx.Deadline()
	require.False(t, ok, "the first call has no deadline")

	ctx, stop = gather.Context([]context.Context{early, late})
	defer stop()
	d, ok := ctx.Deadline()
	require.True(t, ok)
	lateDeadline, _ := late.Deadline()
	require.Equal(t, lateDeadline, d)
}
