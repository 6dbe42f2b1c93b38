package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// The world of docs/spec/07-permissions.md 10 and 11.1 as pure facts:
// spaces Support (channels Allgemein, Eskalation) and Marketing (channel
// Kampagnen); Alex and Sam write members of Support; Robin owner; the app
// Tracker with grant G-6 (write on Support/Eskalation).
var (
	support    = ids.MustParse("019ad3a0-7c00-7000-8000-00000000c001")
	allgemein  = ids.MustParse("019ad3a0-7c00-7000-8000-00000000c002")
	eskalation = ids.MustParse("019ad3a0-7c00-7000-8000-00000000c003")
	marketing  = ids.MustParse("019ad3a0-7c00-7000-8000-00000000c004")
	kampagnen  = ids.MustParse("019ad3a0-7c00-7000-8000-00000000c005")

	robinID   = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000a3")
	alexID    = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000a1")
	samID     = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000a2")
	trackerID = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000b1")
	agentID   = ids.MustParse("019ad3a0-7c00-7000-8000-0000000000b2")

	msgOfAlex    = ids.MustParse("019ad3a0-7c00-7000-8000-00000000d001")
	msgOfSam     = ids.MustParse("019ad3a0-7c00-7000-8000-00000000d002")
	msgOfTracker = ids.MustParse("019ad3a0-7c00-7000-8000-00000000d003")
	appID        = ids.MustParse("019ad3a0-7c00-7000-8000-00000000e001")
)

var now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const stepUpMaxAge = 10 * time.Minute

var (
	robin   = actor.Principal{ID: robinID, Kind: actor.KindPerson, Role: actor.RoleOwner}
	alex    = actor.Principal{ID: alexID, Kind: actor.KindPerson, Role: actor.RoleMember}
	sam     = actor.Principal{ID: samID, Kind: actor.KindPerson, Role: actor.RoleMember}
	tracker = actor.Principal{ID: trackerID, Kind: actor.KindApp, InstallationActive: true,
		GrantedScopes: []string{"events:subscribe", "messages:read", "messages:write"}}
	agent = actor.Principal{ID: agentID, Kind: actor.KindAgent}
)

// factsOf returns the facts of p in the world.
func factsOf(p actor.Principal) domain.Facts {
	f := domain.Facts{Now: now, StepUpMaxAge: stepUpMaxAge, Memberships: map[ids.ID]authz.Level{}}
	switch p.ID {
	case alexID, samID:
		f.Memberships[support] = authz.LevelWrite
	case trackerID:
		f.Grants = []domain.GrantFact{{SpaceID: support, ChannelID: eskalation, Level: authz.LevelWrite}} // G-6
	}
	return f
}

func channel(space, id ids.ID) authorize.Resource {
	return authorize.Resource{Kind: authorize.KindChannel, ID: id, SpaceID: space}
}

func message(id, channel, author ids.ID) authorize.Resource {
	return authorize.Resource{Kind: authorize.KindMessage, ID: id, SpaceID: support, ChannelID: channel, Owner: author}
}

func with(p actor.Principal, change func(*actor.Principal)) actor.Principal {
	p.GrantedScopes = append([]string(nil), p.GrantedScopes...)
	change(&p)
	return p
}

// allowed is the allow decision; notFound and forbidden the denials with a
// reason.
var allowed = authorize.Decision{Outcome: authorize.Allow}

func notFound(reason string) authorize.Decision {
	return authorize.Decision{Outcome: authorize.NotFound, Reason: reason}
}

func forbidden(reason string) authorize.Decision {
	return authorize.Decision{Outcome: authorize.Forbidden, Reason: reason}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	unauthorized := authorize.Decision{Outcome: authorize.Unauthorized, Reason: domain.ReasonUnauthenticated}
	stepUp := authorize.Decision{Outcome: authorize.StepUpRequired, Reason: domain.ReasonStepUpRequired}
	app := authorize.Resource{Kind: authorize.KindApp, ID: appID}

	for _, tc := range []struct {
		name   string
		p      actor.Principal
		facts  func(*domain.Facts)
		action authorize.Action
		r      authorize.Resource
		want   authorize.Decision
	}{
		{"anyone reads the public discovery", actor.Principal{}, nil, authorize.InstanceDiscoveryRead, authorize.Resource{}, allowed},
		{"anyone may sign in", actor.Principal{}, nil, authorize.SessionCreate, authorize.Resource{}, allowed},
		{"nobody may post without credentials", actor.Principal{}, nil, authorize.MessagePost, channel(support, allgemein), unauthorized},
		{"nobody may read the instance without credentials", actor.Principal{}, nil, authorize.InstanceRead, authorize.Resource{}, unauthorized},

		{"Alex posts in Allgemein", alex, nil, authorize.MessagePost, channel(support, allgemein), allowed},
		{"Alex reads Eskalation", alex, nil, authorize.MessageRead, channel(support, eskalation), allowed},
		{"Alex sees Support", alex, nil, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace, ID: support}, allowed},
		{"Alex cannot see Marketing", alex, nil, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace, ID: marketing}, notFound(domain.ReasonNoGrant)},
		{"Alex cannot post in Marketing", alex, nil, authorize.MessagePost, channel(marketing, kampagnen), notFound(domain.ReasonNoGrant)},
		{"Alex cannot list the channels of Marketing", alex, nil, authorize.ChannelRead, authorize.Resource{Kind: authorize.KindChannel, SpaceID: marketing}, notFound(domain.ReasonNoGrant)},
		{"Alex lists the channels of Support", alex, nil, authorize.ChannelRead, authorize.Resource{Kind: authorize.KindChannel, SpaceID: support}, allowed},
		{"Alex may list spaces", alex, nil, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace}, allowed},
		{"Sam with a read membership reads Allgemein", sam, func(f *domain.Facts) { f.Memberships[support] = authz.LevelRead },
			authorize.MessageRead, channel(support, allgemein), allowed},
		{"Sam with a read membership cannot post", sam, func(f *domain.Facts) { f.Memberships[support] = authz.LevelRead },
			authorize.MessagePost, channel(support, allgemein), forbidden(domain.ReasonNoGrant)},
		{"a person with only a grant on Eskalation reads it", sam, func(f *domain.Facts) {
			f.Memberships = nil
			f.Grants = []domain.GrantFact{{SpaceID: support, ChannelID: eskalation, Level: authz.LevelRead}}
		}, authorize.MessageRead, channel(support, eskalation), allowed},
		{"a person with only a grant on Eskalation sees Allgemein but may not read it", sam, func(f *domain.Facts) {
			f.Memberships = nil
			f.Grants = []domain.GrantFact{{SpaceID: support, ChannelID: eskalation, Level: authz.LevelRead}}
		}, authorize.MessageRead, channel(support, allgemein), forbidden(domain.ReasonNoGrant)},
		{"a person with only a grant on Eskalation sees Support", sam, func(f *domain.Facts) {
			f.Memberships = nil
			f.Grants = []domain.GrantFact{{SpaceID: support, ChannelID: eskalation, Level: authz.LevelRead}}
		}, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace, ID: support}, allowed},
		{"a space-wide grant lifts a read membership", sam, func(f *domain.Facts) {
			f.Memberships[support] = authz.LevelRead
			f.Grants = []domain.GrantFact{{SpaceID: support, Level: authz.LevelWrite}}
		}, authorize.MessagePost, channel(support, allgemein), allowed},
		{"Robin posts anywhere", robin, nil, authorize.MessagePost, channel(marketing, kampagnen), allowed},

		{"Tracker posts in Eskalation (G-6)", tracker, nil, authorize.MessagePost, channel(support, eskalation), allowed},
		{"Tracker reads Eskalation", tracker, nil, authorize.MessageRead, channel(support, eskalation), allowed},
		{"Tracker cannot post in Allgemein", tracker, nil, authorize.MessagePost, channel(support, allgemein), notFound(domain.ReasonNoGrant)},
		{"Tracker cannot see Marketing", tracker, nil, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace, ID: marketing}, notFound(domain.ReasonNoGrant)},
		{"Tracker sees Support through its channel grant", tracker, nil, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace, ID: support}, allowed},
		{"Tracker with a read grant cannot post", tracker, func(f *domain.Facts) { f.Grants[0].Level = authz.LevelRead },
			authorize.MessagePost, channel(support, eskalation), forbidden(domain.ReasonNoGrant)},
		{"Tracker with a space-wide grant posts in Allgemein", tracker, func(f *domain.Facts) { f.Grants[0].ChannelID = ids.Zero },
			authorize.MessagePost, channel(support, allgemein), allowed},
		{"Tracker without messages:write gets scope_missing", with(tracker, func(p *actor.Principal) { p.GrantedScopes = []string{"messages:read"} }),
			nil, authorize.MessagePost, channel(support, eskalation), forbidden(domain.ReasonScopeMissing)},
		{"Tracker without channels:read cannot list channels", tracker, nil, authorize.ChannelRead,
			authorize.Resource{Kind: authorize.KindChannel, SpaceID: support}, forbidden(domain.ReasonScopeMissing)},
		{"Tracker with an inactive installation gets app_not_installed", with(tracker, func(p *actor.Principal) { p.InstallationActive = false }),
			nil, authorize.MessagePost, channel(support, eskalation), forbidden(domain.ReasonAppNotInstalled)},
		{"an inactive app is refused before the owner-only rule", with(tracker, func(p *actor.Principal) { p.InstallationActive = false }),
			nil, authorize.AppRead, app, forbidden(domain.ReasonAppNotInstalled)},
		{"Tracker reads the instance without any scope", with(tracker, func(p *actor.Principal) { p.GrantedScopes = nil }),
			nil, authorize.InstanceRead, authorize.Resource{}, allowed},
		{"Tracker may not read /me", tracker, nil, authorize.MeRead, authorize.Resource{Owner: trackerID}, forbidden(domain.ReasonSubjectKindNotAllowed)},

		{"Alex edits his message", alex, nil, authorize.MessageUpdate, message(msgOfAlex, allgemein, alexID), allowed},
		{"Alex may not edit Sam's message", alex, nil, authorize.MessageUpdate, message(msgOfSam, allgemein, samID), forbidden(domain.ReasonNotSelf)},
		{"Robin may not edit Sam's message", robin, nil, authorize.MessageUpdate, message(msgOfSam, allgemein, samID), forbidden(domain.ReasonNotSelf)},
		{"Robin deletes Sam's message", robin, nil, authorize.MessageDelete, message(msgOfSam, allgemein, samID), allowed},
		{"Alex may not delete Sam's message", alex, nil, authorize.MessageDelete, message(msgOfSam, allgemein, samID), forbidden(domain.ReasonNotSelf)},
		{"Tracker deletes its message in Eskalation", tracker, nil, authorize.MessageDelete, message(msgOfTracker, eskalation, trackerID), allowed},
		{"Tracker cannot see a message in Allgemein", tracker, nil, authorize.MessageDelete, message(msgOfAlex, allgemein, alexID), notFound(domain.ReasonNoGrant)},

		{"Robin creates a space", robin, nil, authorize.SpaceManage, authorize.Resource{Kind: authorize.KindSpace}, allowed},
		{"Alex may not create a space", alex, nil, authorize.SpaceManage, authorize.Resource{Kind: authorize.KindSpace}, notFound(domain.ReasonOwnerOnly)},
		{"Robin with a personal token never reaches owner-only actions", with(robin, func(p *actor.Principal) { p.ViaPersonalToken = true }),
			nil, authorize.SpaceManage, authorize.Resource{Kind: authorize.KindSpace}, notFound(domain.ReasonOwnerOnly)},
		{"Tracker may not create a channel", tracker, nil, authorize.ChannelManage, authorize.Resource{Kind: authorize.KindChannel, SpaceID: support}, notFound(domain.ReasonOwnerOnly)},
		{"Alex cannot see an app (AZ-P4)", alex, nil, authorize.AppRead, app, notFound(domain.ReasonOwnerOnly)},
		{"Robin reads an app", robin, nil, authorize.AppRead, app, allowed},
		{"Robin installs an app only after a step-up", robin, nil, authorize.AppInstall, app, stepUp},
		{"Robin installs an app with a fresh step-up", with(robin, func(p *actor.Principal) { p.SteppedUpAt = now.Add(-time.Minute) }),
			nil, authorize.AppInstall, app, allowed},
		{"a step-up exactly identity.step_up_max_age old still counts", with(robin, func(p *actor.Principal) { p.SteppedUpAt = now.Add(-stepUpMaxAge) }),
			nil, authorize.AppInstall, app, allowed},
		{"a stale step-up does not count", with(robin, func(p *actor.Principal) { p.SteppedUpAt = now.Add(-stepUpMaxAge - time.Second) }),
			nil, authorize.AppInstall, app, stepUp},
		{"a personal token with a step-up time never counts", with(robin, func(p *actor.Principal) {
			p.ViaPersonalToken = true
			p.SteppedUpAt = now
		}), nil, authorize.AppInstall, app, notFound(domain.ReasonOwnerOnly)},
		{"Robin redelivers without a step-up", robin, nil, authorize.WebhookOutRedeliver, authorize.Resource{Kind: authorize.KindWebhookDelivery, ID: appID}, allowed},

		{"Alex signs out of his session", alex, nil, authorize.SessionDelete, authorize.Resource{Owner: alexID}, allowed},
		{"Alex reads himself", alex, nil, authorize.MeRead, authorize.Resource{ID: alexID, Owner: alexID}, allowed},
		{"Alex may not revoke Sam's token", alex, nil, authorize.PersonalTokenManage, authorize.Resource{Owner: samID}, notFound(domain.ReasonNotSelf)},
		{"Alex lists his own tokens", with(alex, func(p *actor.Principal) { p.ViaPersonalToken = true }), nil, authorize.PersonalTokenRead, authorize.Resource{Owner: alexID}, allowed},

		{"an agent may not post", agent, nil, authorize.MessagePost, channel(support, allgemein), forbidden(domain.ReasonSubjectKindNotAllowed)},
		{"an agent reads the public discovery", agent, nil, authorize.InstanceDiscoveryRead, authorize.Resource{}, allowed},
		{"the system transitions a subscription", actor.System, nil, authorize.WebhookOutTransition, app, allowed},
		{"Robin may not perform a system action", robin, nil, authorize.WebhookOutTransition, app, forbidden(domain.ReasonSubjectKindNotAllowed)},
		{"a system action without a principal is unauthorized", actor.Principal{}, nil, authorize.WebhookOutTransition, app, unauthorized},
		{"the system may not post", actor.System, nil, authorize.MessagePost, channel(support, allgemein), forbidden(domain.ReasonSubjectKindNotAllowed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := factsOf(tc.p)
			if tc.facts != nil {
				tc.facts(&f)
			}
			got, err := domain.Decide(tc.p, tc.action, tc.r, f)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestDecideRefusesWiringBugs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		action authorize.Action
		r      authorize.Resource
		want   error
	}{
		{"an action outside the catalogue", "message.explode", channel(support, allgemein), domain.ErrUnknownAction},
		{"a delivery check without its receive action", authorize.WebhookOutDeliver, authorize.Resource{Kind: authorize.KindMessage, SpaceID: support, ChannelID: eskalation}, domain.ErrDeliveryOf},
		{"a delivery check of a personal event without the receive action self", authorize.WebhookOutDeliver,
			authorize.Resource{Kind: authorize.KindAppInstallation, DeliveryOf: authorize.MessageRead, Audience: alexID}, domain.ErrDeliveryOf},
		{"a resource of another kind", authorize.MessagePost, authorize.Resource{Kind: authorize.KindSpace, ID: support}, domain.ErrResourceKind},
		{"a channel without its space", authorize.MessagePost, authorize.Resource{Kind: authorize.KindChannel, ID: allgemein}, domain.ErrUnplaced},
		{"a message without its channel", authorize.MessageUpdate, authorize.Resource{Kind: authorize.KindMessage, ID: msgOfAlex, SpaceID: support, Owner: alexID}, domain.ErrUnplaced},
		{"a message without its author", authorize.MessageUpdate, message(msgOfAlex, allgemein, ids.Zero), domain.ErrNoAuthor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := domain.Decide(alex, tc.action, tc.r, factsOf(alex))
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
		})
	}
}

func TestNeedsStanding(t *testing.T) {
	t.Parallel()
	require.True(t, domain.NeedsStanding(alex, authorize.MessagePost))
	require.True(t, domain.NeedsStanding(tracker, authorize.MessageRead))
	require.False(t, domain.NeedsStanding(robin, authorize.MessagePost), "owners hold admin everywhere")
	require.False(t, domain.NeedsStanding(alex, authorize.MeRead))
	require.False(t, domain.NeedsStanding(actor.Principal{}, authorize.MessagePost))
	require.False(t, domain.NeedsStanding(actor.System, authorize.WebhookOutTransition))
}

func BenchmarkDecide(b *testing.B) {
	f := factsOf(tracker)
	r := channel(support, eskalation)
	for b.Loop() {
		d, err := domain.Decide(tracker, authorize.MessagePost, r, f)
		if err != nil || !d.Allowed() {
			b.Fatal("Tracker must be allowed to post in Eskalation")
		}
	}
}
