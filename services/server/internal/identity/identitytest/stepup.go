package identitytest

import (
	"time"

	"bothy/server/internal/kernel/actor"
)

// StepUpFresh reports whether p carries a step-up fresh enough for an
// action that requires one: p is a person in a session (a personal token
// never counts, whatever its SteppedUpAt) whose SteppedUpAt lies at most
// maxAge (identity.step_up_max_age) before now. A session counts as
// stepped up from its sign-in, because the person entered the password
// then.
//
// It is the rule the authorizer applies (authz/domain, steppedUp), stated
// here for the tests of sessions and tokens, which check what a session
// carries without deciding an action; no production code asks it, so it
// left the identity port (D-CL-16).
func StepUpFresh(p actor.Principal, now time.Time, maxAge time.Duration) bool {
	if p.Kind != actor.KindPerson || p.ViaPersonalToken || p.SteppedUpAt.IsZero() {
		return false
	}
	return now.Sub(p.SteppedUpAt) <= maxAge
}
