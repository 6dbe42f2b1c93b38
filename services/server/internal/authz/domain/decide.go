package domain

import (
	"slices"
	"time"

	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// The denial reasons (docs/spec/07-permissions.md 4.1). A forbidden denial
// shows its reason to the caller; a not_found denial never does (the
// reason goes only to the audit trail), because an invisible resource must
// answer exactly like an unknown one.
const (
	// ReasonUnauthenticated: the action needs a principal (unauthorized).
	ReasonUnauthenticated = "unauthenticated"
	// ReasonStepUpRequired: the action needs a fresh step-up.
	ReasonStepUpRequired = "step_up_required"
	// ReasonScopeMissing: the app lacks the action's scope (forbidden).
	ReasonScopeMissing = "scope_missing"
	// ReasonAppNotInstalled: the app's installation is not active
	// (forbidden).
	ReasonAppNotInstalled = "app_not_installed"
	// ReasonSubjectKindNotAllowed: the principal's kind may not perform the
	// action, for example an agent, or anyone but the system on a system
	// action (forbidden).
	ReasonSubjectKindNotAllowed = "subject_kind_not_allowed"
	// ReasonNotSelf: the resource belongs to another principal: not_found
	// for self actions (the resource is invisible), forbidden for the
	// author rule on a visible message.
	ReasonNotSelf = "not_self"
	// ReasonNoGrant: no membership or grant makes the resource visible
	// (not_found), or the level held is below the action's right
	// (forbidden).
	ReasonNoGrant = "no_grant"
	// ReasonOwnerOnly: an owner-only action asked by anyone but an owner in
	// a session (not_found).
	ReasonOwnerOnly = "owner_only"
)

// The errors of Decide. They are internal *errs.Error values: each is a
// wiring bug of the caller, never a denial.
var (
	// ErrUnknownAction: the action is not in the catalogue.
	ErrUnknownAction = errs.New(errs.CodeInternal, "authz: action is not in the catalogue")
	// ErrDeferred: the action is deferred (deferred.go).
	ErrDeferred = errs.New(errs.CodeInternal, "authz: action is deferred")
	// ErrResourceKind: the resource's kind differs from the action's.
	ErrResourceKind = errs.New(errs.CodeInternal, "authz: resource kind does not match the action")
	// ErrNoAuthor: an action with an author rule on a resource without
	// Owner.
	ErrNoAuthor = errs.New(errs.CodeInternal, "authz: resource lacks its owner")
	// ErrDeliveryOf: a delivery check whose Resource.DeliveryOf is empty,
	// outside the catalogue or itself a delivery check, or whose audience
	// and receive action disagree (self exactly for a personal event).
	ErrDeliveryOf = errs.New(errs.CodeInternal, "authz: delivery check lacks a valid receive action")
)

// Facts are what a decision may consult besides the principal and the
// resource. The authorizer loads them per principal; NeedsStanding tells
// whether a decision needs Memberships and Grants at all.
type Facts struct {
	// Now is the current time (the clock of the authorizer).
	Now time.Time
	// StepUpMaxAge is identity.step_up_max_age.
	StepUpMaxAge time.Duration
	// Memberships maps each space the person is a member of to the level
	// of the membership. Empty for apps.
	Memberships map[ids.ID]authz.Level
	// Grants are the principal's grants.
	Grants []GrantFact
}

// Decide decides whether p may perform a on r with facts f. It is pure.
// r.Kind may be empty (the action's kind is used); any other kind than the
// action's gives ErrResourceKind, except for the delivery check, whose
// resource is the event's.
//
// The atoms of Requirements are evaluated in order; the first that denies
// gives the decision, and when none denies the action is allowed.
//
// For the delivery check (webhook_out.deliver) the resource is checked
// before any atom, so a wiring bug surfaces whoever asks: DeliveryOf must
// name a catalogue action other than a delivery check, or be
// authorize.ReceiveSelf exactly when Audience is set (a personal event).
//
// Errors (internal *errs.Error): ErrUnknownAction, ErrDeferred,
// ErrResourceKind, ErrDeliveryOf, ErrUnplaced, ErrNoAuthor.
func Decide(p actor.Principal, a authorize.Action, r authorize.Resource, f Facts) (authorize.Decision, error) {
	e, ok := Lookup(a)
	if !ok {
		return authorize.Decision{}, ErrUnknownAction
	}
	if IsDeferred(a) {
		return authorize.Decision{}, ErrDeferred
	}
	if r.Kind == "" {
		r.Kind = e.ResourceKind
	} else if r.Kind != e.ResourceKind && e.ResourceKind != KindOfEvent {
		return authorize.Decision{}, ErrResourceKind
	}
	if e.DeliveryCheck && !validDelivery(r) {
		return authorize.Decision{}, ErrDeliveryOf
	}
	return decideEntry(e, p, r, f)
}

// validDelivery reports whether r describes an event to deliver: a personal
// event (Audience set) has the receive action self, every other event a
// receive action of the catalogue that is not itself a delivery check.
func validDelivery(r authorize.Resource) bool {
	if !r.Audience.IsZero() || r.DeliveryOf == authorize.ReceiveSelf {
		return !r.Audience.IsZero() && r.DeliveryOf == authorize.ReceiveSelf
	}
	recv, ok := Lookup(r.DeliveryOf)
	return ok && !recv.DeliveryCheck
}

// decideEntry evaluates the atoms of e for p on r. It does not check r.Kind
// against e, so a check on the resource of an event (whose kind may differ
// from the receive action's, a message for message.read) can reuse it.
func decideEntry(e Entry, p actor.Principal, r authorize.Resource, f Facts) (authorize.Decision, error) {
	for _, atom := range requirements[e.Action] {
		d, err := evaluate(atom, e, p, r, f)
		if err != nil || !d.Allowed() {
			return d, err
		}
	}
	return allow, nil
}

var allow = authorize.Decision{Outcome: authorize.Allow}

func deny(o authorize.Outcome, reason string) authorize.Decision {
	return authorize.Decision{Outcome: o, Reason: reason}
}

// evaluate runs one atom; an allowed decision means "this atom passes".
func evaluate(atom Atom, e Entry, p actor.Principal, r authorize.Resource, f Facts) (authorize.Decision, error) {
	switch atom {
	case AtomAuthenticated:
		if p.Anonymous() {
			return deny(authorize.Unauthorized, ReasonUnauthenticated), nil
		}
	case AtomSubjectKind:
		if !slices.Contains(e.Subjects, p.Kind) {
			return deny(authorize.Forbidden, ReasonSubjectKindNotAllowed), nil
		}
	case AtomLiveness:
		if p.Kind == actor.KindApp && !p.InstallationActive {
			return deny(authorize.Forbidden, ReasonAppNotInstalled), nil
		}
	case AtomOwnerOnly:
		if !p.IsOwner() || p.ViaPersonalToken {
			return deny(authorize.NotFound, ReasonOwnerOnly), nil
		}
	case AtomScope:
		if p.Kind == actor.KindApp && !p.HasScope(string(e.AppScope)) {
			return deny(authorize.Forbidden, ReasonScopeMissing), nil
		}
	case AtomStepUp:
		if !steppedUp(p, f) {
			return deny(authorize.StepUpRequired, ReasonStepUpRequired), nil
		}
	case AtomSelf:
		if !r.Owner.IsZero() && r.Owner != p.ID {
			return deny(authorize.NotFound, ReasonNotSelf), nil
		}
	case AtomLevel:
		s, err := StandingOn(p, r, f)
		if err != nil {
			return authorize.Decision{}, err
		}
		if !s.Visible {
			return deny(authorize.NotFound, ReasonNoGrant), nil
		}
		if !s.Level.Covers(authz.Level(e.Right)) {
			return deny(authorize.Forbidden, ReasonNoGrant), nil
		}
	case AtomAuthor:
		if r.Owner.IsZero() {
			return authorize.Decision{}, ErrNoAuthor
		}
		if r.Owner != p.ID && (e.Author != AuthorOrOwner || !p.IsOwner()) {
			return deny(authorize.Forbidden, ReasonNotSelf), nil
		}
	case AtomDelivery:
		// Decide has checked r with validDelivery. A personal event goes
		// only to its audience (receive action self; for apps the scope of
		// agent.events.consume is events:subscribe, checked by AtomScope).
		if !r.Audience.IsZero() {
			if r.Audience != p.ID {
				return deny(authorize.NotFound, ReasonNotSelf), nil
			}
			return allow, nil
		}
		// Every other event: the receive action's own decision on the
		// event's resource, whose kind may differ from the receive
		// action's (a message is read with message.read on its channel).
		recv, _ := Lookup(r.DeliveryOf)
		return decideEntry(recv, p, r, f)
	}
	return allow, nil
}

// steppedUp reports whether p is a person in a session whose step-up is at
// most StepUpMaxAge old. A personal token never counts, even when the
// principal carries a step-up time.
func steppedUp(p actor.Principal, f Facts) bool {
	if p.Kind != actor.KindPerson || p.ViaPersonalToken || p.SteppedUpAt.IsZero() {
		return false
	}
	return f.Now.Sub(p.SteppedUpAt) <= f.StepUpMaxAge
}

// NeedsStanding reports whether deciding a for p may consult the
// memberships and grants of Facts, so the authorizer loads them only then:
// for actions with a level requirement asked by a person who is not an
// owner, or by an app, and for the delivery check, whose receive action may
// have one.
func NeedsStanding(p actor.Principal, a authorize.Action) bool {
	if p.IsOwner() || (p.Kind != actor.KindPerson && p.Kind != actor.KindApp) {
		return false
	}
	atoms := requirements[a]
	return slices.Contains(atoms, AtomLevel) || slices.Contains(atoms, AtomDelivery)
}
