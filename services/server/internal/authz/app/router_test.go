package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// TestDeliveryRouterAgreesWithTheDecision (D-M2-26-35): Reach names the
// apps a channel's, a space's, a personal and an instance event can reach
// (a superset of who may receive it), and Deliverable decides exactly as
// Authorize does in filter mode for every app and event of the world,
// with no denial audited and no decision counted.
func TestDeliveryRouterAgreesWithTheDecision(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.world
	pager := authztest.InsertApp(t, b.db, "Pager", authztest.TrackerScopes...)
	noScope := authztest.InsertApp(t, b.db, "Quiet", "events:subscribe")
	msg := func(channel ids.ID) authorize.Resource {
		return authorize.Resource{Kind: authorize.KindMessage, ID: ids.New(), SpaceID: w.Support, ChannelID: channel,
			DeliveryOf: authorize.MessageRead}
	}
	events := map[string]authorize.Resource{
		"a message in Eskalation": msg(w.Eskalation),
		"a message in Allgemein":  msg(w.Allgemein),
		"a message in Marketing": {Kind: authorize.KindMessage, ID: ids.New(), SpaceID: w.Marketing, ChannelID: ids.New(),
			DeliveryOf: authorize.MessageRead},
		"a personal event of Tracker": {Kind: authorize.KindApp, ID: ids.New(), DeliveryOf: authorize.ReceiveSelf, Audience: w.Tracker.ID},
	}
	apps := []actor.Principal{w.Tracker, pager, noScope}

	require.NoError(t, b.uow.Do(background, func(ctx context.Context) error {
		reach, err := b.az.Reach(ctx, events["a message in Eskalation"])
		require.NoError(t, err)
		require.Equal(t, authz.Reach{Principals: []ids.ID{w.Tracker.ID}}, reach, "G-6 is on Eskalation")
		reach, err = b.az.Reach(ctx, events["a message in Allgemein"])
		require.NoError(t, err)
		require.Empty(t, reach.Principals, "nobody holds a grant on Allgemein or Support")
		require.False(t, reach.Everyone)
		reach, err = b.az.Reach(ctx, authorize.Resource{Kind: authorize.KindSpace, ID: w.Support})
		require.NoError(t, err)
		require.Equal(t, []ids.ID{w.Tracker.ID}, reach.Principals, "a grant on a channel reaches the space")
		reach, err = b.az.Reach(ctx, events["a personal event of Tracker"])
		require.NoError(t, err)
		require.Equal(t, []ids.ID{w.Tracker.ID}, reach.Principals)
		reach, err = b.az.Reach(ctx, authorize.Resource{Kind: authorize.KindInstance, DeliveryOf: authorize.Action("instance.read")})
		require.NoError(t, err)
		require.True(t, reach.Everyone)

		for name, r := range events {
			got, err := b.az.Deliverable(ctx, apps, r)
			require.NoError(t, err)
			for i, p := range apps {
				d, err := b.az.Authorize(authorize.Filter(ctx), p, authorize.WebhookOutDeliver, r)
				require.NoError(t, err)
				require.Equal(t, d.Allowed(), got[i], "%s for app %d", name, i)
			}
		}
		return nil
	}))
	require.Empty(t, audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.deliver"}))
	require.Zero(t, b.decisions(t, "allow", ""))
}

// TestDeliverableRoutesAMalformedEventToTheAttempt: a stored event whose
// resource the decision rejects (no receive action, a data fault) is an
// internal error for Authorize, so the check before the attempt reports
// it on the head; Deliverable routes it instead of failing, so one such
// event cannot stop the consumer round for every app.
func TestDeliverableRoutesAMalformedEventToTheAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := authorize.Resource{Kind: authorize.KindMessage, ID: ids.New(), SpaceID: b.world.Support, ChannelID: b.world.Allgemein}
	require.NoError(t, b.uow.Do(background, func(ctx context.Context) error {
		_, err := b.az.Authorize(authorize.Filter(ctx), b.world.Tracker, authorize.WebhookOutDeliver, r)
		require.Error(t, err, "the attempt's check fails on it")
		got, err := b.az.Deliverable(ctx, []actor.Principal{b.world.Tracker}, r)
		require.NoError(t, err)
		require.Equal(t, []bool{true}, got, "routed, although Tracker has no grant on Allgemein")
		return nil
	}))
}
