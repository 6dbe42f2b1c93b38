// Package clock is the one source of "now" for rules that depend on time
// (backoff, deadlines, step-up age, retention). Code takes a Clock instead of
// calling time.Now, so tests can move time with a Fake.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface {
	// Now returns the current instant.
	Now() time.Time
}

// Sleeper is a Clock that can also wait: a use case that must wait for a
// time of its clock (a rate limit's window) waits through Sleep, so a test
// with a Fake does not wait on the wall clock.
type Sleeper interface {
	// Sleep returns once d has passed on the clock, or ctx's error when it
	// ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// Sleep waits d on c: through c's own Sleep when c is a Sleeper, else on
// the wall clock. A d of zero or less returns at once (ctx's error when it
// already ended).
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if s, ok := c.(Sleeper); ok {
		return s.Sleep(ctx, d)
	}
	return Real{}.Sleep(ctx, d)
}

// Stamp returns c.Now() in UTC, truncated to the microsecond: the instant as
// a PostgreSQL timestamptz stores it, so that a time written and read back
// compares equal to the one a rule decided with. It is the one accessor of
// "now" for code that stores or compares times (D-CL-14); a use case's
// now() method is a call of it.
func Stamp(c Clock) time.Time { return c.Now().UTC().Truncate(time.Microsecond) }

// Real is the wall clock. Its zero value is ready to use.
type Real struct{}

// Now returns time.Now() in UTC.
func (Real) Now() time.Time { return time.Now().UTC() }

// Sleep waits d on the wall clock, or until ctx ends (its error).
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fake is a clock that stands still until a test sets or advances it. It is
// safe for concurrent use.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a Fake showing start (in UTC).
func NewFake(start time.Time) *Fake { return &Fake{now: start.UTC()} }

// Now returns the instant the fake shows.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Set makes the fake show t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t.UTC()
}

// Advance moves the fake forward by d (or back, for a negative d) and returns
// the new instant.
func (f *Fake) Advance(d time.Duration) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	return f.now
}

// Sleep advances the fake by d at once, as if the wait had passed; ctx's
// error when it already ended.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		f.Advance(d)
	}
	return nil
}
