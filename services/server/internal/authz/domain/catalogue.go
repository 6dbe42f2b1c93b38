// Package domain holds the pure rules of authorization: the action
// catalogue (catalogue.go), the app scopes (scopes.go), the requirements
// derived from each entry (requirements.go), visibility and levels per
// resource kind (visibility.go), the deferred list (deferred.go) and the
// decision itself (decide.go). Nothing here does I/O: the facts a decision
// needs (grants, memberships, the time) come in as Facts.
package domain

import (
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
)

// Right is the kind of permission an action needs
// (docs/spec/05-actions.md 2.4).
type Right string

// The rights.
const (
	// RightPublic needs no principal at all.
	RightPublic Right = "public"
	// RightSelf needs an authenticated principal acting on its own
	// resource (Resource.Owner Zero or the principal itself).
	RightSelf Right = "self"
	// RightRead needs the level read on the resource (a grant or
	// membership, or the owner role).
	RightRead Right = "read"
	// RightWrite needs the level write.
	RightWrite Right = "write"
	// RightAdmin needs the level admin.
	RightAdmin Right = "admin"
	// RightSystem is decided only for actor.System (R-AZ-15, R-AZ-27).
	RightSystem Right = "system"
)

// Effect says whether an action changes state (docs/spec/05-actions.md 2.7).
type Effect string

// The effects.
const (
	// EffectRead changes nothing.
	EffectRead Effect = "read"
	// EffectWrite changes state.
	EffectWrite Effect = "write"
)

// AuthorRule ties an action to the owner of the resource (the author of a
// message) on top of the level.
type AuthorRule string

// The author rules.
const (
	// AuthorNone: any principal with the level may act.
	AuthorNone AuthorRule = "none"
	// AuthorOnly: only the resource's owner (Resource.Owner) may act.
	AuthorOnly AuthorRule = "author"
	// AuthorOrOwner: the resource's owner or a person with the instance
	// role owner may act.
	AuthorOrOwner AuthorRule = "author_or_owner"
)

// KindOfEvent is the resource kind of webhook_out.deliver in the catalogue:
// the action targets the resource of the event to deliver, whatever its
// kind.
const KindOfEvent authorize.ResourceKind = "event"

// Entry is one action of the catalogue.
type Entry struct {
	// Action is the action id.
	Action authorize.Action
	// ResourceKind is the kind of resource the action targets; KindOfEvent
	// for webhook_out.deliver.
	ResourceKind authorize.ResourceKind
	// Right is the permission it needs.
	Right Right
	// Subjects are the principal kinds that may perform it; any other kind
	// gets forbidden subject_kind_not_allowed. Public actions allow anyone,
	// also the anonymous principal, whatever Subjects says.
	Subjects []actor.Kind
	// OwnerOnly actions are for persons with the owner role in a session;
	// everyone else, and an owner with a personal token, gets not_found.
	OwnerOnly bool
	// StepUp actions need a session step-up within identity.step_up_max_age.
	StepUp bool
	// Audit actions are audited on allow by the use case that acts
	// (R-AZ-03); denials of every action are audited by the authorizer.
	Audit bool
	// Effect is read or write.
	Effect Effect
	// AppScope is the scope an app principal needs (ScopeNone for none).
	AppScope Scope
	// Author ties the action to the resource's owner.
	Author AuthorRule
	// DeliveryCheck marks webhook_out.deliver: the receive check of an event
	// for its receiver, decided in filter mode.
	DeliveryCheck bool
	// Doc says in a few words what the action covers.
	Doc string
}

// System reports whether e is a system action (R-AZ-15).
func (e Entry) System() bool { return e.Right == RightSystem }

var (
	persons     = []actor.Kind{actor.KindPerson}
	personsApps = []actor.Kind{actor.KindPerson, actor.KindApp}
	everyone    = []actor.Kind{actor.KindPerson, actor.KindApp, actor.KindAgent}
	appsOnly    = []actor.Kind{actor.KindApp}
	systemOnly  = []actor.Kind{actor.KindSystem}
)

// ownerAdmin is the shape of every owner-only administration action on an
// app: admin right, persons and apps as subjects (apps get not_found),
// no app scope.
func ownerAdmin(a authorize.Action, kind authorize.ResourceKind, stepUp, audit bool, effect Effect, doc string) Entry {
	return Entry{Action: a, ResourceKind: kind, Right: RightAdmin, Subjects: personsApps, OwnerOnly: true,
		StepUp: stepUp, Audit: audit, Effect: effect, AppScope: ScopeNone, Author: AuthorNone, Doc: doc}
}

// catalogue is the action catalogue in the order of docs/spec/actions.yaml.
var catalogue = []Entry{
	{Action: authorize.InstanceDiscoveryRead, ResourceKind: authorize.KindInstance, Right: RightPublic, Subjects: everyone,
		Effect: EffectRead, AppScope: ScopeNone, Author: AuthorNone, Doc: "getInstance, getJwks, getWebhookKeys; anonymous allowed"},
	{Action: authorize.InstanceRead, ResourceKind: authorize.KindInstance, Right: RightRead, Subjects: personsApps,
		Effect: EffectRead, AppScope: ScopeNone, Author: AuthorNone, Doc: "instance metadata; receive action of instance.updated (scope-free)"},

	{Action: authorize.SessionCreate, ResourceKind: authorize.KindSession, Right: RightPublic, Subjects: persons,
		Effect: EffectWrite, AppScope: ScopeNone, Author: AuthorNone, Doc: "sign in"},
	{Action: authorize.SessionDelete, ResourceKind: authorize.KindSession, Right: RightSelf, Subjects: persons,
		Effect: EffectWrite, AppScope: ScopeNone, Author: AuthorNone, Doc: "sign out"},
	{Action: authorize.SessionStepUp, ResourceKind: authorize.KindSession, Right: RightSelf, Subjects: persons,
		Effect: EffectWrite, AppScope: ScopeNone, Author: AuthorNone, Doc: "step-up of the current session"},
	{Action: authorize.MeRead, ResourceKind: authorize.KindPerson, Right: RightSelf, Subjects: persons,
		Effect: EffectRead, AppScope: ScopeNone, Author: AuthorNone, Doc: "getMe"},
	{Action: authorize.PersonalTokenRead, ResourceKind: authorize.KindPersonalToken, Right: RightSelf, Subjects: persons,
		Effect: EffectRead, AppScope: ScopeNone, Author: AuthorNone, Doc: "list own personal tokens"},
	{Action: authorize.PersonalTokenManage, ResourceKind: authorize.KindPersonalToken, Right: RightSelf, Subjects: persons,
		Audit: true, Effect: EffectWrite, AppScope: ScopeNone, Author: AuthorNone, Doc: "create and revoke own personal tokens"},
	ownerAdmin(authorize.PersonManage, authorize.KindPerson, true, true, EffectWrite, "owner creates people"),

	{Action: authorize.SpaceRead, ResourceKind: authorize.KindSpace, Right: RightRead, Subjects: personsApps,
		Effect: EffectRead, AppScope: ScopeNone, Author: AuthorNone, Doc: "list visible spaces"},
	{Action: authorize.SpaceManage, ResourceKind: authorize.KindSpace, Right: RightAdmin, Subjects: personsApps, OwnerOnly: true,
		Audit: true, Effect: EffectWrite, AppScope: ScopeNone, Author: AuthorNone, Doc: "create spaces, add members"},
	{Action: authorize.ChannelRead, ResourceKind: authorize.KindChannel, Right: RightRead, Subjects: personsApps,
		Effect: EffectRead, AppScope: ScopeChannelsRead, Author: AuthorNone, Doc: "list channels; receive action of channel.*"},
	{Action: authorize.ChannelManage, ResourceKind: authorize.KindChannel, Right: RightAdmin, Subjects: personsApps, OwnerOnly: true,
		Audit: true, Effect: EffectWrite, AppScope: ScopeNone, Author: AuthorNone, Doc: "create channels"},
	{Action: authorize.MessageRead, ResourceKind: authorize.KindChannel, Right: RightRead, Subjects: personsApps,
		Effect: EffectRead, AppScope: ScopeMessagesRead, Author: AuthorNone, Doc: "list messages; receive action of message.* and thread.created"},
	{Action: authorize.MessagePost, ResourceKind: authorize.KindChannel, Right: RightWrite, Subjects: personsApps,
		Effect: EffectWrite, AppScope: ScopeMessagesWrite, Author: AuthorNone, Doc: "post a message, optionally in or opening a thread"},
	{Action: authorize.MessageUpdate, ResourceKind: authorize.KindMessage, Right: RightWrite, Subjects: personsApps,
		Effect: EffectWrite, AppScope: ScopeMessagesWrite, Author: AuthorOnly, Doc: "edit a message (author only)"},
	{Action: authorize.MessageDelete, ResourceKind: authorize.KindMessage, Right: RightWrite, Subjects: personsApps,
		Effect: EffectWrite, AppScope: ScopeMessagesWrite, Author: AuthorOrOwner, Doc: "delete a message (author or owner)"},

	ownerAdmin(authorize.AppRegister, authorize.KindApp, true, true, EffectWrite, "createApp with a manifest"),
	ownerAdmin(authorize.AppRead, authorize.KindApp, false, false, EffectRead, "listApps, getApp"),
	ownerAdmin(authorize.AppInstall, authorize.KindApp, true, true, EffectWrite, "installApp"),
	ownerAdmin(authorize.AppUninstall, authorize.KindApp, true, true, EffectWrite, "uninstallApp"),
	ownerAdmin(authorize.AppSuspend, authorize.KindApp, true, true, EffectWrite, "suspendApp"),
	ownerAdmin(authorize.AppResume, authorize.KindApp, true, true, EffectWrite, "resumeApp"),
	ownerAdmin(authorize.AppSetScopes, authorize.KindApp, true, true, EffectWrite, "setAppScopes"),
	ownerAdmin(authorize.AppGrantRead, authorize.KindApp, false, false, EffectRead, "list app grants"),
	ownerAdmin(authorize.AppGrantManage, authorize.KindApp, true, true, EffectWrite, "create and delete app grants (like G-6)"),

	ownerAdmin(authorize.WebhookOutRead, authorize.KindApp, false, false, EffectRead, "list webhook subscriptions and deliveries"),
	ownerAdmin(authorize.WebhookOutManage, authorize.KindApp, true, true, EffectWrite, "create, update and delete webhook subscriptions"),
	ownerAdmin(authorize.WebhookOutRedeliver, authorize.KindWebhookDelivery, false, true, EffectWrite,
		"redeliverWebhook; recoverWebhookDeliveries on the deliveries of a subscription"),
	ownerAdmin(authorize.WebhookOutTest, authorize.KindApp, false, true, EffectWrite,
		"sendWebhookTest: one signed test request to a subscription's address"),
	{Action: authorize.WebhookOutDeliver, ResourceKind: KindOfEvent, Right: RightRead, Subjects: appsOnly,
		Effect: EffectRead, AppScope: ScopeEventsSubscribe, Author: AuthorNone, DeliveryCheck: true,
		Doc: "receive check before every webhook delivery; also needs the scope of the event's receive action"},
	{Action: authorize.InstanceSigningKeyRotate, ResourceKind: authorize.KindInstance, Right: RightSystem, Subjects: systemOnly,
		Audit: true, Effect: EffectWrite, AppScope: ScopeNone, Author: AuthorNone, Doc: "automatic and operator rotation steps of the server signing keys"},
	{Action: authorize.WebhookOutTransition, ResourceKind: authorize.KindApp, Right: RightSystem, Subjects: systemOnly,
		Audit: true, Effect: EffectWrite, AppScope: ScopeNone, Author: AuthorNone, Doc: "automatic webhook subscription transitions (R-AZ-27)"},
}

// index maps an action id to its position in catalogue.
var index = func() map[authorize.Action]int {
	m := make(map[authorize.Action]int, len(catalogue))
	for i, e := range catalogue {
		m[e.Action] = i
	}
	return m
}()

// Catalogue returns every entry in catalogue order. The slice is a copy;
// the Subjects slices are shared and must not be changed.
func Catalogue() []Entry { return append([]Entry(nil), catalogue...) }

// Lookup returns the entry of a.
func Lookup(a authorize.Action) (Entry, bool) {
	i, ok := index[a]
	if !ok {
		return Entry{}, false
	}
	return catalogue[i], true
}

// IDs returns every action id in catalogue order, as strings: the known
// actions of api.VerifyRegistrations.
func IDs() []string {
	out := make([]string, 0, len(catalogue))
	for _, e := range catalogue {
		out = append(out, string(e.Action))
	}
	return out
}
