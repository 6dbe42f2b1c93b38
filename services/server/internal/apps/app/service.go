package app

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/authz"
	"bothy/server/internal/identity"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/txn"
)

// Options configure the use cases. Only internal/wire reads configuration.
type Options struct {
	// AllowedHosts is webhook.allowed_hosts: the hosts (host[:port]) that
	// manifest delivery addresses may name, checked at registration and
	// again at install (D-M2-26-8).
	AllowedHosts hostlist.List
}

// Deps are the collaborators of the use cases.
type Deps struct {
	// UnitOfWork runs each use case in one transaction.
	UnitOfWork txn.UnitOfWork
	// Authorizer decides every action first.
	Authorizer authorize.Authorizer
	// Audit records the allows.
	Audit auditing.Recorder
	// Events appends app.installation.updated.
	Events eventlog.Appender
	// Principals creates the app principal and its app tokens.
	Principals identity.Principals
	// Grants gives, lists and revokes the grants of app principals
	// (internal/authz).
	Grants authz.Grants
	// Store persists apps and installations.
	Store Store
	// Clock stamps rows and events.
	Clock clock.Clock
	// Hooks lets the webhook work act in the install, uninstall and resume
	// units of work. Optional: nil means no webhook work is assembled, so
	// there are no subscriptions to create, disable or resume.
	Hooks InstallationHooks
}

// Service runs the use cases.
type Service struct {
	uow        txn.UnitOfWork
	az         authorize.Authorizer
	audit      auditing.Recorder
	events     eventlog.Appender
	principals identity.Principals
	grants     authz.Grants
	store      Store
	clock      clock.Clock
	hooks      InstallationHooks
	opts       Options
}

// New returns the use cases. It returns an error when a required
// dependency is missing (a wiring bug).
func New(d Deps, o Options) (*Service, error) {
	if d.UnitOfWork == nil || d.Authorizer == nil || d.Audit == nil || d.Events == nil ||
		d.Principals == nil || d.Grants == nil || d.Store == nil || d.Clock == nil {
		return nil, errors.New("apps: New needs a unit of work, an authorizer, an audit recorder, an event appender, principals, grants, a store and a clock")
	}
	return &Service{
		uow: d.UnitOfWork, az: d.Authorizer, audit: d.Audit, events: d.Events,
		principals: d.Principals, grants: d.Grants, store: d.Store, clock: d.Clock, hooks: d.Hooks, opts: o,
	}, nil
}

// now returns the clock's time cut to microseconds, the precision of
// timestamptz, so the values a use case returns equal the stored ones.
func (s *Service) now() time.Time { return clock.Stamp(s.clock) }

// newID returns a UUIDv7 stamped with t, so ids sort like the clock.
func newID(t time.Time) (ids.ID, error) {
	id, err := ids.NewAt(t, rand.Reader)
	if err != nil {
		return ids.Zero, errs.Wrap(err, "apps: generating an identifier failed")
	}
	return id, nil
}

// authorizeApp decides action for the principal of ctx on the app appID
// (Zero for the collection) and returns the principal.
func (s *Service) authorizeApp(ctx context.Context, action authorize.Action, appID ids.ID) (actor.Principal, error) {
	p := actor.From(ctx)
	return p, authorize.Check(ctx, s.az, p, action, authorize.Resource{Kind: authorize.KindApp, ID: appID})
}

// authorizeAndLoad decides action for the principal of ctx on the app
// appID, then loads the app: not_found when it does not exist, so an
// unknown app answers like an invisible one.
func (s *Service) authorizeAndLoad(ctx context.Context, action authorize.Action, appID ids.ID) (actor.Principal, domain.App, error) {
	p, err := s.authorizeApp(ctx, action, appID)
	if err != nil {
		return p, domain.App{}, err
	}
	a, ok, err := s.store.App(ctx, appID)
	if err != nil {
		return p, domain.App{}, err
	}
	if !ok {
		return p, domain.App{}, errs.NotFound()
	}
	return p, a, nil
}

// record writes the allow entry of action on the app appID.
func (s *Service) record(ctx context.Context, p actor.Principal, action authorize.Action, appID ids.ID, details ...auditing.Detail) error {
	return s.audit.Record(ctx, auditing.Entry{
		Action:       string(action),
		Actor:        p,
		ResourceKind: string(authorize.KindApp),
		ResourceID:   appID,
		Outcome:      auditing.Allow,
		Details:      details,
	})
}

// installationPayload is the payload of app.installation.updated
// (docs/spec/11-extensions.md 4.3): identifiers and codes only, no null.
type installationPayload struct {
	InstallationID     ids.ID   `json:"installation_id"`
	AppID              ids.ID   `json:"app_id"`
	State              string   `json:"state"`
	GrantedScopes      []string `json:"granted_scopes"`
	EventSubscriptions []string `json:"event_subscriptions"`
}

// appendUpdated appends app.installation.updated for inst, a personal event
// whose audience is the app principal. It is the use case's last write.
func (s *Service) appendUpdated(ctx context.Context, p actor.Principal, inst apps.Installation) error {
	_, err := s.events.Append(ctx, eventlog.Event{
		Type:                eventlog.AppInstallationUpdated,
		ResourceID:          inst.ID,
		AudiencePrincipalID: inst.PrincipalID,
		ActorID:             p.ID,
		Payload: installationPayload{
			InstallationID:     inst.ID,
			AppID:              inst.AppID,
			State:              string(inst.State),
			GrantedScopes:      nonNil(inst.GrantedScopes),
			EventSubscriptions: nonNil(inst.EventSubscriptions),
		},
	})
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
