// Package auditing is the audit port: use cases record what a principal did
// (allowed changes) and the authorizer records what it refused (denials), each
// as one Entry in the audit trail (table audit_events).
//
// An entry carries identifiers and codes only. Its details are built with the
// typed helpers ID, Code, Int, Bool and List, and a code must match
// ^[a-z0-9_.:-]{1,64}$, so free text, URLs (no "/" allowed), message text and
// secrets cannot enter the trail (SEC-AUD-5). The correlation ID of the
// request or job (kernel/correlation) is copied into every entry.
//
// The Postgres implementation is auditing/auditpg; tests read the trail with
// auditing/audittest.
package auditing

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// Recorder writes audit entries.
type Recorder interface {
	// Record writes e in the ambient unit of work of ctx (or on its own when
	// ctx carries none), so the entry commits or rolls back together with the
	// change it describes. Use it for allows: the use case that acts records
	// them (R-AZ-03). It returns an internal *errs.Error wrapping ErrInvalid
	// when e is malformed, and writes nothing then.
	Record(ctx context.Context, e Entry) error
	// RecordDetached writes e in a transaction of its own, outside the
	// ambient one, so it stays when the ambient unit of work rolls back. Use
	// it for denials: the use case fails and rolls back, the denial must stay
	// (R-AZ-04). Errors as for Record.
	RecordDetached(ctx context.Context, e Entry) error
}

// Outcome is the result an entry records.
type Outcome string

// The outcomes.
const (
	// Allow: the action was allowed and carried out.
	Allow Outcome = "allow"
	// Deny: the action was refused; Entry.Reason says why.
	Deny Outcome = "deny"
)

// Actor kinds stored for principals without an ID of their own. The other
// kinds are actor.Kind values (person, app, agent).
const (
	// ActorAnonymous is stored for the zero principal (no credentials).
	ActorAnonymous = "anonymous"
)

// Entry is one audit record.
type Entry struct {
	// Action is the action id of the catalogue, for example
	// "webhook_out.manage".
	Action string
	// Actor is who acted: stored as its ID and kind. actor.System (the
	// server itself) and the anonymous zero principal have no ID.
	Actor actor.Principal
	// ResourceKind is the kind of the target, for example "app".
	ResourceKind string
	// ResourceID names the target; Zero for collections.
	ResourceID ids.ID
	// Outcome is Allow or Deny.
	Outcome Outcome
	// Reason is the denial reason code (scope_missing, no_grant, ...);
	// required for Deny and empty for Allow.
	Reason string
	// Details are the facts of the change, built with ID, Code, Int, Bool
	// and List; keys must be unique.
	Details []Detail
}

// ErrInvalid is wrapped by the error Record returns for a malformed entry.
var ErrInvalid = errors.New("auditing: invalid entry")

var (
	actionPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)
	kindPattern   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	codePattern   = regexp.MustCompile(`^[a-z0-9_.:\-]{1,64}$`)
)

// maxActionLen bounds an action id; ids of the catalogue are far shorter.
const maxActionLen = 64

// ValidCode reports whether s is a code: 1 to 64 characters of
// [a-z0-9_.:-]. Codes are the only strings an entry may carry.
func ValidCode(s string) bool { return codePattern.MatchString(s) }

// Validate checks e and returns an internal *errs.Error wrapping ErrInvalid
// that names the defective part (never its value), or nil.
func (e Entry) Validate() error {
	if len(e.Action) > maxActionLen || !actionPattern.MatchString(e.Action) {
		return invalid("action is not an action id")
	}
	if _, err := ActorColumns(e.Actor); err != nil {
		return err
	}
	if !kindPattern.MatchString(e.ResourceKind) {
		return invalid("resource kind is not a kind")
	}
	switch e.Outcome {
	case Allow:
		if e.Reason != "" {
			return invalid("an allow carries no reason")
		}
	case Deny:
		if !ValidCode(e.Reason) {
			return invalid("a deny needs a reason code")
		}
	default:
		return invalid("outcome is neither allow nor deny")
	}
	seen := make(map[string]bool, len(e.Details))
	for i, d := range e.Details {
		if d.err != nil {
			return invalid(fmt.Sprintf("detail %d: %s", i, d.err.Error()))
		}
		if d.key == "" {
			return invalid(fmt.Sprintf("detail %d was not built with a helper", i))
		}
		if seen[d.key] {
			return invalid(fmt.Sprintf("detail %d repeats a key", i))
		}
		seen[d.key] = true
	}
	return nil
}

// Actor is the stored form of a principal.
type Actor struct {
	// ID is the principal ID, Zero for system and anonymous.
	ID ids.ID
	// Kind is person, app, agent, system or anonymous.
	Kind string
}

// ActorColumns returns the stored form of p. A person, app or agent without
// an ID is invalid; system and anonymous are stored without an ID.
func ActorColumns(p actor.Principal) (Actor, error) {
	switch p.Kind {
	case "":
		if !p.ID.IsZero() {
			return Actor{}, invalid("an actor with an ID needs a kind")
		}
		return Actor{Kind: ActorAnonymous}, nil
	case actor.KindSystem:
		return Actor{Kind: string(actor.KindSystem)}, nil
	case actor.KindPerson, actor.KindApp, actor.KindAgent:
		if p.ID.IsZero() {
			return Actor{}, invalid("a person, app or agent actor needs an ID")
		}
		return Actor{ID: p.ID, Kind: string(p.Kind)}, nil
	default:
		return Actor{}, invalid("actor kind is unknown")
	}
}

// DetailsMap returns the details of e as the JSON object stored in
// audit_events.details. Call it only on a validated entry.
func (e Entry) DetailsMap() map[string]any {
	m := make(map[string]any, len(e.Details))
	for _, d := range e.Details {
		m[d.key] = d.value
	}
	return m
}

func invalid(what string) error {
	return errs.Wrap(fmt.Errorf("%w: %s", ErrInvalid, what), "audit entry rejected")
}
