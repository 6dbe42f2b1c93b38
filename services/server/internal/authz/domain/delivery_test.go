package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// TestWebhookOutDeliverRequirement is the table of docs/spec/07-permissions.md
// 8.1: webhook_out.deliver decides the receive action of the event for the app
// on the event's resource, after events:subscribe.
func TestWebhookOutDeliverRequirement(t *testing.T) {
	t.Parallel()
	scopes := func(s ...string) func(*actor.Principal) {
		return func(p *actor.Principal) { p.GrantedScopes = s }
	}
	created := func(channel ids.ID) authorize.Resource {
		return authorize.Resource{Kind: authorize.KindMessage, ID: msgOfAlex, SpaceID: support, ChannelID: channel,
			DeliveryOf: authorize.MessageRead}
	}
	personal := func(audience ids.ID) authorize.Resource {
		return authorize.Resource{Kind: authorize.KindAppInstallation, ID: ids.New(), DeliveryOf: authorize.ReceiveSelf, Audience: audience}
	}
	instanceUpdated := authorize.Resource{Kind: authorize.KindInstance, ID: ids.New(), DeliveryOf: authorize.InstanceRead}
	channelCreated := authorize.Resource{Kind: authorize.KindChannel, ID: eskalation, SpaceID: support, DeliveryOf: authorize.ChannelRead}

	for _, tc := range []struct {
		name string
		p    actor.Principal
		r    authorize.Resource
		want authorize.Decision
	}{
		{"an app with a grant and events:subscribe and messages:read receives message.created", tracker, created(eskalation), allowed},
		{"an app without a grant on the channel gets not_found", tracker, created(allgemein), notFound(domain.ReasonNoGrant)},
		{"an app without messages:read gets forbidden scope_missing", with(tracker, scopes("events:subscribe", "messages:write")),
			created(eskalation), forbidden(domain.ReasonScopeMissing)},
		{"an app without events:subscribe gets forbidden scope_missing", with(tracker, scopes("messages:read", "messages:write")),
			created(eskalation), forbidden(domain.ReasonScopeMissing)},
		{"a personal event for another principal gives not_found", tracker, personal(alexID), notFound(domain.ReasonNotSelf)},
		{"a personal event for the app itself gives allow", with(tracker, scopes("events:subscribe")), personal(trackerID), allowed},
		{"instance.updated needs only events:subscribe", with(tracker, scopes("events:subscribe")), instanceUpdated, allowed},
		{"instance.updated without events:subscribe gets forbidden scope_missing", with(tracker, scopes("messages:read")),
			instanceUpdated, forbidden(domain.ReasonScopeMissing)},
		{"channel.created needs channels:read", tracker, channelCreated, forbidden(domain.ReasonScopeMissing)},
		{"an agent principal gets forbidden subject_kind_not_allowed", agent, created(eskalation), forbidden(domain.ReasonSubjectKindNotAllowed)},
		{"a person gets forbidden subject_kind_not_allowed", alex, created(eskalation), forbidden(domain.ReasonSubjectKindNotAllowed)},
		{"an app whose installation is not active gets forbidden app_not_installed",
			with(tracker, func(p *actor.Principal) { p.InstallationActive = false }), created(eskalation), forbidden(domain.ReasonAppNotInstalled)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.Decide(tc.p, authorize.WebhookOutDeliver, tc.r, factsOf(tc.p))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}

	for _, tc := range []struct {
		name       string
		deliveryOf authorize.Action
	}{
		{"an empty DeliveryOf is an internal error", ""},
		{"DeliveryOf webhook_out.deliver itself is an internal error", authorize.WebhookOutDeliver},
		{"a DeliveryOf outside the catalogue is an internal error", "message.explode"},
		{"DeliveryOf self without an audience is an internal error", authorize.ReceiveSelf},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := created(eskalation)
			r.DeliveryOf = tc.deliveryOf
			_, err := domain.Decide(tracker, authorize.WebhookOutDeliver, r, factsOf(tracker))
			require.Error(t, err)
			require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
		})
	}
}

func TestWebhookOutDeliverOfAnUnplacedMessageIsAnError(t *testing.T) {
	t.Parallel()
	r := authorize.Resource{Kind: authorize.KindMessage, ID: msgOfAlex, SpaceID: support, DeliveryOf: authorize.MessageRead}
	_, err := domain.Decide(tracker, authorize.WebhookOutDeliver, r, factsOf(tracker))
	require.ErrorIs(t, err, domain.ErrUnplaced)
}

func TestWebhookOutDeliverNeedsStanding(t *testing.T) {
	t.Parallel()
	require.True(t, domain.NeedsStanding(tracker, authorize.WebhookOutDeliver), "the receive action may need the app's grants")
	require.False(t, domain.NeedsStanding(agent, authorize.WebhookOutDeliver))
}
