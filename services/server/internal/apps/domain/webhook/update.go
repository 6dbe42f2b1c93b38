package webhook

import (
	"slices"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/kernel/errs"
)

// The change codes of the audit entry webhook_out.manage
// (docs/spec/11-extensions.md 6; one entry per kind of change, D-M2-26-26).
const (
	ChangeCreated = "created"
	ChangeUpdated = "updated"
	ChangePaused  = "paused"
	ChangeResumed = "resumed"
	ChangeRotated = "rotated"
	ChangeDeleted = "deleted"
)

// Update is an owner's change of a subscription (updateWebhookSubscription)
// with its parts validated: URL is the stored form of a validated target
// (domain.Target.URL), EventTypes passed domain.ValidateEventTypes, and a
// rotation is asked only of a subscription with HMAC. Nil fields stay as
// they are.
type Update struct {
	URL              *string
	EventTypes       *[]string
	State            *apps.SubscriptionState
	RotateHMACSecret bool
	// MaxPerSecond is the new rate limit, 0 for none (ADR 0081).
	MaxPerSecond *int
}

// UpdatePlan is what an owner's update changes.
type UpdatePlan struct {
	// Next is the subscription to write; the current one when Changes is
	// empty.
	Next apps.Subscription
	// Changes lists the audit change codes, one per kind of change, in the
	// order updated, paused or resumed, rotated; empty when the update
	// changes nothing, so nothing is written or audited.
	Changes []string
	// Resumed is set by a resume or a re-enable: the head delivery becomes
	// due now and its job is scheduled (D-M2-26-27).
	Resumed bool
	// Rotated is set by a rotation: Next.HMACGeneration is the generation
	// of the new secret.
	Rotated bool
}

// PlanUpdate returns what u changes on sub at now (docs/api/webhooks.md 4
// and 5; D-M2-26-26, D-M2-26-29): a new address, new event types or a new
// rate limit are an update; state paused pauses an active or disabled subscription; state
// active resumes a paused one or re-enables a disabled one, with the
// failures in a row reset; either clears disabled_at; a state the
// subscription has already changes nothing; a rotation raises the HMAC
// generation and stamps hmac_rotated_at with now. Any change stamps
// updated_at.
//
// Errors (*errs.Error): validation_failed with pointer /state and item
// enum for a state other than active or paused; internal for an unknown
// current state.
func PlanUpdate(sub apps.Subscription, u Update, now time.Time) (UpdatePlan, error) {
	if u.State != nil && *u.State != apps.SubscriptionActive && *u.State != apps.SubscriptionPaused {
		return UpdatePlan{}, errs.Validation(errs.Field("/state", "enum"))
	}
	plan := UpdatePlan{Next: sub}
	next := &plan.Next
	if u.URL != nil && *u.URL != sub.URL || u.EventTypes != nil && !slices.Equal(*u.EventTypes, sub.EventTypes) ||
		u.MaxPerSecond != nil && *u.MaxPerSecond != sub.MaxPerSecond {
		if u.URL != nil {
			next.URL = *u.URL
		}
		if u.EventTypes != nil {
			next.EventTypes = slices.Clone(*u.EventTypes)
		}
		if u.MaxPerSecond != nil {
			next.MaxPerSecond = *u.MaxPerSecond
		}
		plan.Changes = append(plan.Changes, ChangeUpdated)
	}
	if u.State != nil && *u.State != sub.State {
		ev, code := EventOwnerPause, ChangePaused
		if *u.State == apps.SubscriptionActive {
			ev, code, plan.Resumed = EventOwnerResume, ChangeResumed, true
		}
		state, err := NextSubscriptionState(sub.State, ev)
		if err != nil {
			return UpdatePlan{}, err
		}
		next.State, next.DisabledAt = state, time.Time{}
		if plan.Resumed {
			next.ConsecutiveFailures = 0
		}
		plan.Changes = append(plan.Changes, code)
	}
	if u.RotateHMACSecret {
		next.HMACGeneration, next.HMACRotatedAt = sub.HMACGeneration+1, now
		plan.Rotated = true
		plan.Changes = append(plan.Changes, ChangeRotated)
	}
	if len(plan.Changes) == 0 {
		return UpdatePlan{Next: sub}, nil
	}
	next.UpdatedAt = now
	return plan, nil
}
