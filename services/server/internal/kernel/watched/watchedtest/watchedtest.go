// Package watchedtest helps tests of caches of watched facts (ADR 0103):
// Reported passes the watch's reports on and tells the test of each.
package watchedtest

import (
	"sync"
	"testing"
	"time"

	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/watched"
)

// Reported passes every report of a watch to Events (the changes only
// unless DropChanges, which proves that a cache answers from memory) and
// tells the test of them: AwaitChange, AwaitLost, Listening.
type Reported struct {
	watched.Events
	// DropChanges keeps Changed and ChangedAll from Events.
	DropChanges bool

	once      sync.Once
	listening chan struct{}
	changed   chan ids.ID
	lost      chan struct{}
}

// NewReported returns a Reported that passes on to events. It remembers
// up to 256 changes the test has not awaited; one more holds the watch
// until the test awaits, so a test that causes more awaits as it goes.
func NewReported(events watched.Events, dropChanges bool) *Reported {
	return &Reported{Events: events, DropChanges: dropChanges, listening: make(chan struct{}),
		changed: make(chan ids.ID, 256), lost: make(chan struct{}, 16)}
}

// Watching implements watched.Events.
func (r *Reported) Watching() {
	r.Events.Watching()
	r.once.Do(func() { close(r.listening) })
}

// Lost implements watched.Events.
func (r *Reported) Lost() {
	r.Events.Lost()
	select {
	case r.lost <- struct{}{}:
	default:
	}
}

// Changed implements watched.Events.
func (r *Reported) Changed(id ids.ID) {
	if !r.DropChanges {
		r.Events.Changed(id)
	}
	r.changed <- id
}

// ChangedAll implements watched.Events.
func (r *Reported) ChangedAll() {
	if !r.DropChanges {
		r.Events.ChangedAll()
	}
	r.changed <- ids.Zero
}

// Listening returns a channel closed at the first Watching.
func (r *Reported) Listening() <-chan struct{} { return r.listening }

// AwaitChange waits for a report of a change of want (ids.Zero: of
// everything) and fails the test after 30 s.
func (r *Reported) AwaitChange(t testing.TB, want ids.ID) {
	t.Helper()
	for {
		select {
		case got := <-r.changed:
			if got == want {
				return
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("watchedtest: the watch reported no change of %v within 30 s", want)
		}
	}
}

// AwaitLost waits for a Lost and fails the test after 30 s.
func (r *Reported) AwaitLost(t testing.TB) {
	t.Helper()
	select {
	case <-r.lost:
	case <-time.After(30 * time.Second):
		t.Fatal("watchedtest: the watch reported no Lost within 30 s")
	}
}
