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
		reach, err := b.az.Reach(ctx, []authorize.Resource{
			events["a message in Eskalation"],
			events["a message in Allgemein"],
			{Kind: authorize.KindSpace, ID: w.Support},
			events["a personal event of Tracker"],
			{Kind: authorize.KindInstance, DeliveryOf: authorize.Action("instance.read")},
			events["a message in Eskalation"],
		})
		require.NoError(t, err)
		require.Len(t, reach, 6)
		require.Equal(t, authz.Reach{Principals: []ids.ID{w.Tracker.ID}}, reach[0], "G-6 is on Eskalation")
		require.Empty(t, reach[1].Principals, "nobody holds a grant on Allgemein or Support")
		require.False(t, reach[1].Everyone)
		require.Equal(t, []ids.ID{w.Tracker.ID}, reach[2].Principals, "a grant on a channel reaches the space")
		require.Equal(t, []ids.ID{w.Tracker.ID}, reach[3].Principals)
		require.True(t, reach[4].Everyone)
		require.Equal(t, reach[0], reach[5], "a place asked twice is answered twice")

		names := make([]string, 0, len(events))
		qs := make([]authz.DeliveryQuestion, 0, len(events))
		for name, r := range events {
			names = append(names, name)
			qs = append(qs, authz.DeliveryQuestion{Apps: apps, Resource: r})
		}
		got, err := b.az.Deliverable(ctx, qs)
		require.NoError(t, err)
		require.Len(t, got, len(qs))
		for qi, q := range qs {
			for i, p := range apps {
				d, err := b.az.Authorize(authorize.Filter(ctx), p, authorize.WebhookOutDeliver, q.Resource)
				require.NoError(t, err)
				require.Equal(t, d.Allowed(), got[qi][i], "%s for app %d", names[qi], i)
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
		got, err := b.az.Deliverable(ctx, []authz.DeliveryQuestion{{Apps: []actor.Principal{b.world.Tracker}, Resource: r}})
		require.NoError(t, err)
		require.Equal(t, [][]bool{{true}}, got, "routed, although Tracker has no grant on Allgemein")
		return nil
	}))
}
