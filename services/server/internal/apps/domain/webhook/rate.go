package webhook

import (
	"slices"
	"time"

	"bothy/server/internal/kernel/errs"
)

// PointerMaxPerSecond is the pointer of a rate limit out of range.
const PointerMaxPerSecond = "/max_per_second"

// ValidateMaxPerSecond checks an owner's rate limit n against limitMax
// (webhook.rate_limit_max): 0 is no limit (D-M2-26-59).
//
// Errors (*errs.Error): validation_failed at /max_per_second with item
// minimum below 0 or maximum above limitMax.
func ValidateMaxPerSecond(n, limitMax int) error {
	switch {
	case n < 0:
		return errs.Validation(errs.Field(PointerMaxPerSecond, "minimum"))
	case n > limitMax:
		return errs.Validation(errs.Field(PointerMaxPerSecond, "maximum"))
	}
	return nil
}

// RateWindow is what a subscription with max_per_second remembers of its
// latest attempts (ADR 0081): when each of them ended, oldest first, at
// most the limit of them. An attempt ends when its answer or its error is
// recorded, or, when nobody recorded it (a worker crashed), when its lease
// ran out; a head that ends without a request is no attempt.
//
// The rule (OpensAt): the next attempt may be claimed once the limit-th
// latest end is at least a second behind. A request reaches the receiver
// before its attempt ends, and the subscription has one attempt in flight
// at most, so of any limit + 1 consecutive requests the last is claimed,
// and sent, more than a second after the first arrived: the receiver never
// gets more than the limit within any second, whichever workers send. The
// rate reached is the limit when the receiver answers at once; a slow
// receiver caps the rate further anyway, one attempt being in flight.
type RateWindow []time.Time

// OpensAt returns when the next attempt of a subscription limited to limit
// attempts a second may be claimed: a second after the limit-th latest end
// of w. It returns the zero time when it may be claimed at once: limit is
// 0 (no limit) or fewer than limit attempts are remembered.
func (w RateWindow) OpensAt(limit int) time.Time {
	if limit <= 0 || len(w) < limit {
		return time.Time{}
	}
	return w[len(w)-limit].Add(time.Second)
}

// Ended returns the window after an attempt that ended at end, for a limit
// of limit attempts a second: end in order among the ends of w, then only
// the latest limit ends kept, since OpensAt reads no earlier one. It
// returns nil when limit is 0: a subscription without a limit remembers
// nothing. w is not changed.
func (w RateWindow) Ended(end time.Time, limit int) RateWindow {
	if limit <= 0 {
		return nil
	}
	// Workers stamp ends by their own clocks, so an end may sort before
	// the latest one; it is placed where it belongs.
	i, _ := slices.BinarySearchFunc(w, end, func(a, b time.Time) int { return a.Compare(b) })
	next := slices.Insert(slices.Clone(w), i, end)
	if len(next) > limit {
		next = next[len(next)-limit:]
	}
	return next
}
