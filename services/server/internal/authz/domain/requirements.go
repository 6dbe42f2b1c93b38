package domain

import (
	"slices"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
)

// Atom is one check of a requirement. Decide evaluates the atoms of an
// action in the order Requirements returns them and stops at the first that
// denies (docs/spec/07-permissions.md 4.2). The order is part of the
// contract: checks that depend only on the principal come before checks
// that look at the resource, so a denial never tells more about a resource
// than the principal may know.
type Atom string

// The atoms, in evaluation order.
const (
	// AtomAuthenticated: the principal is not anonymous, else unauthorized.
	AtomAuthenticated Atom = "authenticated"
	// AtomSubjectKind: the principal's kind is in Entry.Subjects, else
	// forbidden subject_kind_not_allowed. For a system action Subjects is
	// [system], so this atom is the whole system rule.
	AtomSubjectKind Atom = "subject_kind"
	// AtomLiveness: an app acts only while its installation is active, else
	// forbidden app_not_installed.
	AtomLiveness Atom = "liveness"
	// AtomOwnerOnly: a person with the owner role in a session, else
	// not_found owner_only (a personal token never reaches owner-only
	// actions).
	AtomOwnerOnly Atom = "owner_only"
	// AtomScope: an app holds Entry.AppScope, else forbidden scope_missing.
	AtomScope Atom = "scope"
	// AtomStepUp: a session step-up within identity.step_up_max_age, else
	// step_up_required (personal tokens never count).
	AtomStepUp Atom = "step_up"
	// AtomSelf: the resource is the principal's own (Resource.Owner Zero or
	// the principal), else not_found not_self.
	AtomSelf Atom = "self"
	// AtomLevel: the resource is visible to the principal, else not_found
	// no_grant, and its level covers Entry.Right, else forbidden no_grant.
	AtomLevel Atom = "level"
	// AtomAuthor: the author rule (Entry.Author), else forbidden not_self.
	AtomAuthor Atom = "author"
	// AtomDelivery: the receive check of webhook_out.deliver (Entry.
	// DeliveryCheck; docs/spec/07-permissions.md 8.1). For a personal event
	// (Resource.Audience set) the audience is the principal, else not_found
	// not_self; for every other event the full decision of the receive
	// action Resource.DeliveryOf for the principal on the event's resource
	// (visibility, level and the app scope of the receive action).
	AtomDelivery Atom = "delivery"
)

// Requirements returns the atoms of e in evaluation order. A public action
// has none (anyone, also anonymous). Deferred actions get the atoms that
// need no later facts; Decide refuses them before evaluating any. The
// delivery check comes last: it runs after the app's own scope
// (events:subscribe) and contains the level check of the receive action.
func Requirements(e Entry) []Atom {
	if e.Right == RightPublic {
		return nil
	}
	atoms := []Atom{AtomAuthenticated, AtomSubjectKind}
	if e.System() {
		return atoms
	}
	if slices.Contains(e.Subjects, actor.KindApp) {
		atoms = append(atoms, AtomLiveness)
	}
	if e.OwnerOnly {
		atoms = append(atoms, AtomOwnerOnly)
	}
	if e.AppScope != ScopeNone {
		atoms = append(atoms, AtomScope)
	}
	if e.StepUp {
		atoms = append(atoms, AtomStepUp)
	}
	switch e.Right {
	case RightSelf:
		atoms = append(atoms, AtomSelf)
	case RightRead, RightWrite, RightAdmin:
		if e.ResourceKind != KindOfEvent {
			atoms = append(atoms, AtomLevel)
		}
	}
	if e.Author != AuthorNone {
		atoms = append(atoms, AtomAuthor)
	}
	if e.DeliveryCheck {
		atoms = append(atoms, AtomDelivery)
	}
	return atoms
}

// requirements caches Requirements per action: Decide runs on hot paths.
var requirements = func() map[authorize.Action][]Atom {
	m := make(map[authorize.Action][]Atom, len(catalogue))
	for _, e := range catalogue {
		m[e.Action] = Requirements(e)
	}
	return m
}()
