// Package authz is the port of the authorization module: the grants other
// modules give and revoke (the apps module for the app grant operations, such
// as G-6: write on Support/Eskalation for the app Tracker) and the level
// vocabulary of grants and memberships.
//
// Decisions themselves are asked through kernel/authorize.Authorizer, which
// internal/authz/app implements; the action catalogue, requirements, scopes
// and visibility rules live in internal/authz/domain.
package authz

import (
	"context"
	"time"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// Level is what a grant or a space membership gives on a space or channel.
// Levels are ordered: read < write < admin.
type Level string

// The levels.
const (
	// LevelRead lets a principal read the channel and its messages.
	LevelRead Level = "read"
	// LevelWrite adds posting and editing messages.
	LevelWrite Level = "write"
	// LevelAdmin adds administering the space or channel.
	LevelAdmin Level = "admin"
)

// rank orders the levels; unknown levels rank 0, below read.
func (l Level) rank() int {
	switch l {
	case LevelRead:
		return 1
	case LevelWrite:
		return 2
	case LevelAdmin:
		return 3
	default:
		return 0
	}
}

// Valid reports whether l is one of the three levels.
func (l Level) Valid() bool { return l.rank() > 0 }

// Covers reports whether l is at least need, so write covers read. An
// invalid level covers nothing and is covered by nothing.
func (l Level) Covers(need Level) bool { return l.Valid() && need.Valid() && l.rank() >= need.rank() }

// Max returns the higher of a and b; an invalid level counts as none.
func Max(a, b Level) Level {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

// Grant is one stored grant.
type Grant struct {
	// ID identifies the grant.
	ID ids.ID
	// SubjectID is the principal that holds the grant (an app or a person).
	SubjectID ids.ID
	// Level is what the grant gives.
	Level Level
	// SpaceID is the space the grant applies to.
	SpaceID ids.ID
	// ChannelID narrows the grant to one channel of SpaceID; Zero means the
	// whole space.
	ChannelID ids.ID
	// CreatedBy is the principal that gave the grant.
	CreatedBy ids.ID
	// CreatedAt is when it was given.
	CreatedAt time.Time
}

// NewGrant is the input of Grants.Grant.
type NewGrant struct {
	// SubjectID is the principal that receives the grant. Required.
	SubjectID ids.ID
	// Level is read, write or admin. Required.
	Level Level
	// SpaceID is the space. Required.
	SpaceID ids.ID
	// ChannelID is a channel of SpaceID, or Zero for the whole space.
	ChannelID ids.ID
	// CreatedBy is the acting principal, recorded on the row. Required.
	CreatedBy ids.ID
}

// Grants gives, revokes and lists grants. Each method runs in the unit of
// work of ctx (or on its own without one). It does not authorize: the
// calling use case has decided its own action first (for apps,
// app.grant.manage or app.grant.read on the app) and writes the allow audit.
// A grant given or revoked in a unit of work is seen by decisions of later
// units of work; decisions earlier in the same unit of work may have
// memoised the old grants.
type Grants interface {
	// Grant stores g and returns the grant. Errors (*errs.Error):
	// validation_failed with pointers /level (enum), /space_id (not_found)
	// and /channel_id (not_found: no such channel in the space);
	// not_found when SubjectID names no principal; conflict with reason
	// grant_exists when the subject already holds a grant on the same
	// space and channel; internal otherwise.
	Grant(ctx context.Context, g NewGrant) (Grant, error)
	// Revoke deletes the grant grantID held by subjectID. It returns a
	// not_found *errs.Error when there is no such grant of that subject,
	// so a grant of another principal answers like an unknown one.
	Revoke(ctx context.Context, subjectID, grantID ids.ID) error
	// ListForPrincipal returns the grants held by subjectID ordered by
	// created_at, then id; an empty slice when there are none.
	ListForPrincipal(ctx context.Context, subjectID ids.ID) ([]Grant, error)
}

// DeliveryRouter routes durable events to apps by their rights when a
// consumer round turns events into webhook deliveries (docs/DECISIONS.md
// D-M2-26-35, ADR 0051): an event an app cannot see at the round gets no
// delivery. It applies exactly the rules of the Authorizer's decision of
// webhook_out.deliver in filter mode (no denial audit, no decision
// counted), so the check before every attempt agrees with the round unless
// a right changed in between. Implemented by internal/authz/app.Authorizer;
// every method runs in the unit of work of ctx and memoises what it read
// for it.
type DeliveryRouter interface {
	// Reach returns, for each of rs, the principals that may see an event
	// on it through their grants: the audience of a personal event; for an
	// event in a channel (a channel, thread or message) the principals
	// with a grant on that channel or on its space; for an event on a
	// space those with any grant in it. Everyone is true for the rest (an
	// event on the instance), which any principal may see; Principals is
	// then empty. Each result is a superset of the apps Deliverable
	// allows, found with one indexed read per place in one statement for
	// the places of rs not yet read in the unit of work, so a round's cost
	// follows its events and the apps that can see them, not every
	// subscription. The result has the index of rs.
	Reach(ctx context.Context, rs []authorize.Resource) ([]Reach, error)
	// Deliverable decides webhook_out.deliver for each question: each of
	// its apps (app principals with their installation's scopes) on its
	// resource, loading the grants of the apps of every question not yet
	// loaded in the unit of work with one statement. The result has the
	// index of qs, and each entry the index of its question's apps: true
	// where the decision allows, and for every app when the decision
	// rejects the resource as malformed (a data fault the check before
	// the attempt reports, instead of the round stopping the consumer).
	// Errors: failures to load grants.
	Deliverable(ctx context.Context, qs []DeliveryQuestion) ([][]bool, error)
}

// DeliveryQuestion asks DeliveryRouter.Deliverable which of Apps may
// receive an event on Resource.
type DeliveryQuestion struct {
	// Apps are app principals with their installation's scopes.
	Apps []actor.Principal
	// Resource is the event's resource.
	Resource authorize.Resource
}

// Reach is the result of DeliveryRouter.Reach.
type Reach struct {
	// Everyone is true when any principal may see the event.
	Everyone bool
	// Principals may see it through a grant (or as its audience) when
	// Everyone is false; ordered by id, no duplicates.
	Principals []ids.ID
}
