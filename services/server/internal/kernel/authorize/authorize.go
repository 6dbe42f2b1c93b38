// Package authorize is the authorization port: every use case asks it before
// it acts, and it answers with a Decision. The rules (requirements, scopes,
// visibility, grants) live in internal/authz, which implements Authorizer; no
// other package decides rights.
//
// Two rules shape every caller (docs/spec/05-actions.md rules 1 and 2):
// an invisible resource answers exactly like an unknown one (not_found), and a
// denial in normal mode is audited by the authorizer itself (R-AZ-04), while
// allows are audited by the use case that acts.
package authorize

import (
	"context"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// Action is an action id of the catalogue (docs/spec/actions.yaml), for
// example "webhook_out.manage".
type Action string

// ResourceKind names the kind of a resource an action targets.
type ResourceKind string

// The resource kinds.
const (
	KindInstance            ResourceKind = "instance"
	KindSession             ResourceKind = "session"
	KindPerson              ResourceKind = "person"
	KindPersonalToken       ResourceKind = "personal_token"
	KindSpace               ResourceKind = "space"
	KindChannel             ResourceKind = "channel"
	KindThread              ResourceKind = "thread"
	KindMessage             ResourceKind = "message"
	KindApp                 ResourceKind = "app"
	KindAppInstallation     ResourceKind = "app_installation"
	KindAgent               ResourceKind = "agent"
	KindWebhookSubscription ResourceKind = "webhook_subscription"
	KindWebhookDelivery     ResourceKind = "webhook_delivery"
)

// Resource describes what an action targets. Callers fill every field they
// know: the authorizer decides visibility from the enclosing space and channel
// without reading the caller's tables.
type Resource struct {
	// Kind and ID name the resource; ID is Zero for collections (create, list).
	Kind ResourceKind
	ID   ids.ID
	// SpaceID, ChannelID and ThreadID place the resource in the chat tree.
	SpaceID, ChannelID, ThreadID ids.ID
	// Owner is the principal that owns the resource (author of a message,
	// holder of a token); Zero when the kind has no owner.
	Owner ids.ID
	// DeliveryOf is the receive action of the event to deliver; used only by
	// webhook_out.deliver.
	DeliveryOf Action
	// Audience is the audience principal of a personal event, Zero otherwise;
	// used only by webhook_out.deliver.
	Audience ids.ID
}

// Outcome is the verdict of a decision.
type Outcome string

// The outcomes.
const (
	// Allow lets the action proceed.
	Allow Outcome = "allow"
	// Unauthorized: the action needs a principal and there is none.
	Unauthorized Outcome = "unauthorized"
	// StepUpRequired: the action needs a fresh step-up.
	StepUpRequired Outcome = "step_up_required"
	// Forbidden: the resource is visible but the action is denied.
	Forbidden Outcome = "forbidden"
	// NotFound: the resource is invisible to the principal (or unknown).
	NotFound Outcome = "not_found"
)

// Decision is the answer of the authorizer.
type Decision struct {
	// Outcome is the verdict.
	Outcome Outcome
	// Reason refines a denial: scope_missing, app_not_installed,
	// subject_kind_not_allowed, not_self, no_grant, owner_only, ...
	Reason string
}

// Allowed reports whether the decision allows the action.
func (d Decision) Allowed() bool { return d.Outcome == Allow }

// Err returns nil for Allow and the matching *errs.Error otherwise. A
// not_found denial carries no reason in the error, because an invisible
// resource must answer exactly like an unknown one.
func (d Decision) Err() error {
	switch d.Outcome {
	case Allow:
		return nil
	case Unauthorized:
		return errs.New(errs.CodeUnauthorized, "authentication required")
	case StepUpRequired:
		return errs.New(errs.CodeStepUpRequired, "fresh step-up required")
	case Forbidden:
		return errs.Forbidden(d.Reason)
	default:
		return errs.NotFound()
	}
}

// Authorizer decides whether a principal may perform an action on a resource.
type Authorizer interface {
	// Authorize returns the decision. It returns an error only when the
	// decision could not be made (database failure, unknown action: a wiring
	// bug); a denial is a Decision, not an error. In normal mode a denial is
	// audited in a transaction of its own (auditing.Recorder.RecordDetached),
	// so the entry survives the rollback of the use case that was refused; in
	// filter mode (Filter) it is not audited.
	Authorize(ctx context.Context, p actor.Principal, a Action, r Resource) (Decision, error)
	// Preload loads the facts a decision of a by each of ps may consult
	// into the unit of work of ctx, so that their statements can travel
	// with others (txn.Together, ADR 0085) and a later Authorize in the
	// same unit of work reads them from memory; the facts of several
	// principals that are not persons take one statement together
	// (D-M2-26-76). It decides nothing and writes nothing; outside a unit
	// of work nothing is kept. It returns an error only when the facts
	// could not be loaded.
	Preload(ctx context.Context, a Action, ps ...actor.Principal) error
}

// Check runs Authorize and turns the decision into an error: nil when
// allowed, the *errs.Error of the denial otherwise, or the failure itself.
func Check(ctx context.Context, az Authorizer, p actor.Principal, a Action, r Resource) error {
	d, err := az.Authorize(ctx, p, a, r)
	if err != nil {
		return err
	}
	return d.Err()
}

type filterKey struct{}

// Filter returns ctx in filter mode: decisions made with it write no denial
// audit and count no decision (docs/spec/07-permissions.md 4.2, AZ-P13). It is
// for checks that filter what a principal receives, such as the delivery check
// of webhooks, where a denial is the expected, silent outcome.
func Filter(ctx context.Context) context.Context {
	return context.WithValue(ctx, filterKey{}, true)
}

// InFilterMode reports whether ctx was made by Filter.
func InFilterMode(ctx context.Context) bool {
	v, _ := ctx.Value(filterKey{}).(bool)
	return v
}
