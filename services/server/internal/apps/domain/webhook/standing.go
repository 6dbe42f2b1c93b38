package webhook

import (
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/errs"
)

// Standing is the part of a subscription that its state machine and the
// delivery path change: the state, since when it is disabled and the
// counted failures in a row.
type Standing struct {
	// State is active, paused or disabled.
	State apps.SubscriptionState
	// DisabledAt is set exactly while State is disabled
	// (webhook_subscriptions_disabled_at_by_state).
	DisabledAt time.Time
	// ConsecutiveFailures counts counted failures in a row.
	ConsecutiveFailures int
}

// Transition is a change of a subscription's state by a system event or an
// uninstall, as the audit entry webhook_out.transition names it.
type Transition struct {
	// From and To are the states before and after.
	From, To apps.SubscriptionState
	// Cause is the audit cause code of a system event (SubscriptionEvent.Cause);
	// "" for an uninstall, which app.uninstall audits.
	Cause string
}

// Apply returns the standing after ev at now and the transition it makes:
// the state of NextSubscriptionState, DisabledAt now for a change to
// disabled and zero otherwise, the failures unchanged. It returns false,
// with s unchanged, when ev does not apply to the state (for example the
// quota on a subscription an owner paused meanwhile, or a late 410 on a
// disabled one), which means nothing to write and nothing to audit
// (D-M2-26-29). An unknown state or event is an internal *errs.Error.
func (s Standing) Apply(ev SubscriptionEvent, now time.Time) (Standing, Transition, bool, error) {
	to, err := NextSubscriptionState(s.State, ev)
	if errs.CodeOf(err) == errs.CodeConflict {
		return s, Transition{}, false, nil
	}
	if err != nil {
		return s, Transition{}, false, err
	}
	cause, _ := ev.Cause()
	next := s
	next.State, next.DisabledAt = to, time.Time{}
	if to == apps.SubscriptionDisabled {
		next.DisabledAt = now
	}
	return next, Transition{From: s.State, To: to, Cause: cause}, true, nil
}
