package identitytest

import (
	"context"
	"errors"
	"time"

	"bothy/server/internal/identity"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
)

// StepUpMaxAge is the identity.step_up_max_age that Authorizer applies.
const StepUpMaxAge = 10 * time.Minute

// Authorizer decides the identity actions as the catalogue rows say:
// identity.session.create is public; identity.session.delete,
// identity.session.step_up, identity.me.read, identity.token.read and
// identity.token.manage need the principal to act on its own resource
// (Resource.Owner); identity.person.manage is owner only (a personal token
// is never an owner: not_found) with a step-up fresh for StepUpMaxAge.
// Any other action is an error.
//
// It stands in for internal/authz, which owns every rule and is built
// elsewhere, so that the identity tests can run before it is merged. It
// writes no denial audit.
type Authorizer struct {
	// Clock tells now for the step-up check.
	Clock clock.Clock
}

var _ authorize.Authorizer = Authorizer{}

// Authorize implements authorize.Authorizer for the identity actions.
func (a Authorizer) Authorize(_ context.Context, p actor.Principal, action authorize.Action, r authorize.Resource) (authorize.Decision, error) {
	deny := func(o authorize.Outcome) (authorize.Decision, error) { return authorize.Decision{Outcome: o}, nil }
	switch action {
	case authorize.SessionCreate:
		return deny(authorize.Allow)
	case authorize.SessionDelete, authorize.SessionStepUp, authorize.MeRead, authorize.PersonalTokenRead, authorize.PersonalTokenManage:
		switch {
		case p.Anonymous():
			return deny(authorize.Unauthorized)
		case r.Owner != p.ID:
			return deny(authorize.NotFound)
		}
		return deny(authorize.Allow)
	case authorize.PersonManage:
		switch {
		case p.Anonymous():
			return deny(authorize.Unauthorized)
		case !p.IsOwner() || p.ViaPersonalToken:
			return deny(authorize.NotFound)
		case !identity.StepUpFresh(p, a.Clock.Now(), StepUpMaxAge):
			return deny(authorize.StepUpRequired)
		}
		return deny(authorize.Allow)
	}
	return authorize.Decision{}, errors.New("identitytest: Authorizer knows only the identity actions")
}
