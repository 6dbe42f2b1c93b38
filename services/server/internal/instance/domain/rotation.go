package domain

import (
	"slices"
	"strings"
	"time"

	"bothy/server/internal/instance"
)

// Key is what the rules know of a stored signing key of one purpose.
type Key struct {
	// KID is the key's kid (KeyID).
	KID string
	// State is next, active, retiring or retired.
	State instance.KeyState
	// CreatedAt is when the key was made; a next key is published from then.
	CreatedAt time.Time
	// ActivatedAt is when the key became active; zero for a next key.
	ActivatedAt time.Time
	// NotAfter is when a retiring key stops signing; zero before retiring.
	NotAfter time.Time
}

// RuleKey returns k itself, so Key satisfies Keyed.
func (k Key) RuleKey() Key { return k }

// Keyed is anything that carries a Key, such as the stored keys of the app
// layer, so the selection rules can sort and filter them without copying.
type Keyed interface {
	// RuleKey returns the rule view of the key.
	RuleKey() Key
}

// Policy holds the windows of the rotation.
type Policy struct {
	// PublishAhead is agent.jwks_max_age: a next key is published this long
	// before it is promoted and signs, and a retiring key stays published
	// this long after its not_after, so a receiver or agent that cached the
	// key set for the Cache-Control max-age of the key endpoints always
	// knows every key that may sign. Must be positive.
	PublishAhead time.Duration
	// MaxAge is instance.signing_key_max_age: the age at which the active
	// key is replaced. The next key is created MaxAge - PublishAhead after
	// activation, so it is promoted at MaxAge. Must exceed PublishAhead
	// (config check signing_key_publication_window).
	MaxAge time.Duration
}

// Trigger says who asks for a rotation plan.
type Trigger string

// The triggers.
const (
	// TriggerEnsure only makes sure a purpose has an active key: at every
	// start of a process (Ensure).
	TriggerEnsure Trigger = "ensure"
	// TriggerDue runs the steps that are due: retire, promote, and create
	// the next key when the active one reaches MaxAge - PublishAhead (the
	// periodic maintenance job).
	TriggerDue Trigger = "due"
	// TriggerManual is TriggerDue plus a next key at once when none exists
	// (`bothy keys rotate`).
	TriggerManual Trigger = "manual"
)

// StepKind is one change of the key set. Its value is the audit code.
type StepKind string

// The steps, in the order a plan lists them.
const (
	// StepRetire: a retiring key whose not_after + PublishAhead has passed
	// becomes retired; it is no longer published and its private key is
	// erased.
	StepRetire StepKind = "retired"
	// StepPromote: the next key becomes active and the active key becomes
	// retiring with not_after = the time of promotion (the M1-32 promotion
	// rule), so it stops signing at once.
	StepPromote StepKind = "promoted"
	// StepCreateActive: a purpose without any key gets an active key.
	StepCreateActive StepKind = "created_active"
	// StepCreateNext: a new next key is created and published at once.
	StepCreateNext StepKind = "created_next"
)

// Step is one change the plan asks for.
type Step struct {
	// Kind is the change.
	Kind StepKind
	// KID names the key the step changes: the retired key or the promoted
	// next key; empty for the create steps, whose key does not exist yet.
	KID string
	// Previous is, for StepPromote, the active key that becomes retiring;
	// empty when the purpose had no active key.
	Previous string
}

// PlanRotation returns the steps that bring the keys of one purpose up to
// date at now, in the order they must run: retirements, then a promotion or
// a creation. keys are the purpose's keys in the states next, active and
// retiring (retired keys are ignored). The result is empty when nothing is
// due.
//
// Whatever the trigger, a purpose without an active key gets one: its next
// key is promoted at once, or an active key is created, because nothing
// could sign otherwise. TriggerEnsure does nothing else.
func PlanRotation(keys []Key, now time.Time, pol Policy, t Trigger) []Step {
	active, next, retiring := split(keys)
	var steps []Step
	if t != TriggerEnsure {
		for _, r := range retiring {
			if !now.Before(r.NotAfter.Add(pol.PublishAhead)) {
				steps = append(steps, Step{Kind: StepRetire, KID: r.KID})
			}
		}
	}
	switch {
	case active == nil && next != nil:
		steps = append(steps, Step{Kind: StepPromote, KID: next.KID})
	case active == nil:
		steps = append(steps, Step{Kind: StepCreateActive})
	case t == TriggerEnsure:
	case next != nil:
		if !now.Before(next.CreatedAt.Add(pol.PublishAhead)) {
			steps = append(steps, Step{Kind: StepPromote, KID: next.KID, Previous: active.KID})
		}
	case t == TriggerManual || !now.Before(nextCreationDue(*active, pol)):
		steps = append(steps, Step{Kind: StepCreateNext})
	}
	return steps
}

// NextDue returns the earliest instant at which PlanRotation with
// TriggerDue returns a step for keys: a retirement, a promotion or the
// creation of the next key. A purpose without an active key is due at once
// (the zero time). Callers use it to report when the next change happens.
func NextDue(keys []Key, pol Policy) time.Time {
	active, next, retiring := split(keys)
	if active == nil {
		return time.Time{}
	}
	var due time.Time
	if next != nil {
		due = next.CreatedAt.Add(pol.PublishAhead)
	} else {
		due = nextCreationDue(*active, pol)
	}
	for _, r := range retiring {
		if at := r.NotAfter.Add(pol.PublishAhead); at.Before(due) {
			due = at
		}
	}
	return due
}

// nextCreationDue is when the scheduled rotation creates the next key, so
// that it is promoted when the active key reaches MaxAge.
func nextCreationDue(active Key, pol Policy) time.Time {
	return active.ActivatedAt.Add(pol.MaxAge - pol.PublishAhead)
}

// split sorts keys by state; retiring keys come out ordered by kid, so
// plans are deterministic.
func split(keys []Key) (active, next *Key, retiring []Key) {
	for i := range keys {
		switch keys[i].State {
		case instance.KeyActive:
			active = &keys[i]
		case instance.KeyNext:
			next = &keys[i]
		case instance.KeyRetiring:
			retiring = append(retiring, keys[i])
		}
	}
	slices.SortFunc(retiring, func(a, b Key) int { return strings.Compare(a.KID, b.KID) })
	return active, next, retiring
}
