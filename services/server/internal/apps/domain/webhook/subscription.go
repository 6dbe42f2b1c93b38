package webhook

import (
	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/errs"
)

// SubscriptionEvent is something that may change a subscription's state
// (D-M2-26-29). The values of the system events are the cause codes of
// the audit entry webhook_out.transition and of the log attribute
// bothy.reason.
type SubscriptionEvent string

// The subscription events.
const (
	// EventOwnerPause: the owner sets state paused (from active, or from
	// disabled to keep the subscription switched off but collecting).
	EventOwnerPause SubscriptionEvent = "owner_pause"
	// EventOwnerResume: the owner sets state active, a resume from paused or
	// a re-enable from disabled. Both reset consecutive_failures and make the
	// head due now (D-M2-26-27).
	EventOwnerResume SubscriptionEvent = "owner_resume"
	// EventGone: the receiver answered 410.
	EventGone SubscriptionEvent = "gone"
	// EventMaxConsecutiveFailures: consecutive_failures reached
	// webhook.max_consecutive_failures; the head stays pending.
	EventMaxConsecutiveFailures SubscriptionEvent = "max_consecutive_failures"
	// EventRetryMaxAge: a delivery became dead after webhook.retry_max_age.
	EventRetryMaxAge SubscriptionEvent = "retry_max_age"
	// EventGap: an event the subscription should deliver left the event log
	// (detected at the head or from the consumer's lost range).
	EventGap SubscriptionEvent = "gap"
	// EventMaxPending: a round brought the open deliveries of an active
	// subscription to webhook.max_pending_per_subscription.
	EventMaxPending SubscriptionEvent = "max_pending"
	// EventUninstall: the app was uninstalled; audited by app.uninstall.
	EventUninstall SubscriptionEvent = "uninstall"
)

// transitions is the whole state machine of D-M2-26-29: event, then
// current state, then next state. A pair that is missing is rejected.
var transitions = map[SubscriptionEvent]map[apps.SubscriptionState]apps.SubscriptionState{
	EventOwnerPause:  {apps.SubscriptionActive: apps.SubscriptionPaused, apps.SubscriptionDisabled: apps.SubscriptionPaused},
	EventOwnerResume: {apps.SubscriptionPaused: apps.SubscriptionActive, apps.SubscriptionDisabled: apps.SubscriptionActive},
	// A system disable also applies to a paused subscription: an attempt
	// in flight when the owner paused still reports its outcome, and a gap
	// is found in paused subscriptions too (D-M2-26-5).
	EventGone:                   {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
	EventMaxConsecutiveFailures: {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
	EventRetryMaxAge:            {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
	EventGap:                    {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
	// The quota pauses only an active subscription: it must neither pause
	// twice nor bring a disabled subscription back.
	EventMaxPending: {apps.SubscriptionActive: apps.SubscriptionPaused},
	EventUninstall:  {apps.SubscriptionActive: apps.SubscriptionDisabled, apps.SubscriptionPaused: apps.SubscriptionDisabled},
}

// Cause returns the cause code of a system event, audited with the system
// action webhook_out.transition (R-AZ-27), and true. Owner events and
// uninstall are audited by their own actions and return "" and false.
func (ev SubscriptionEvent) Cause() (string, bool) {
	switch ev {
	case EventGone, EventMaxConsecutiveFailures, EventRetryMaxAge, EventGap, EventMaxPending:
		return string(ev), true
	}
	return "", false
}

// NextSubscriptionState returns the state after ev (D-M2-26-29):
//
//	owner pause        active -> paused, disabled -> paused
//	owner resume       paused -> active, disabled -> active (re-enable)
//	gone, max_consecutive_failures, retry_max_age, gap, uninstall
//	                   active -> disabled, paused -> disabled
//	max_pending        active -> paused
//
// Every other pair, including every event that would leave the state as it
// is (for example max_pending on a paused or disabled subscription), is
// rejected with a *errs.Error of code conflict and reason
// domain.ReasonInvalidStateTransition, and current is returned unchanged. So an
// error always means "nothing to write and nothing to audit"; system callers
// that may race with an owner (the quota of a round, a late 410) treat it as
// such. An unknown state or event is an internal error.
func NextSubscriptionState(current apps.SubscriptionState, ev SubscriptionEvent) (apps.SubscriptionState, error) {
	from, ok := transitions[ev]
	if !ok {
		return current, errs.Internalf("apps: unknown subscription event")
	}
	switch current {
	case apps.SubscriptionActive, apps.SubscriptionPaused, apps.SubscriptionDisabled:
	default:
		return current, errs.Internalf("apps: unknown subscription state")
	}
	next, ok := from[current]
	if !ok {
		return current, errs.Conflict(domain.ReasonInvalidStateTransition)
	}
	return next, nil
}
