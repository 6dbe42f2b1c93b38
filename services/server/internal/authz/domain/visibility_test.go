package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

func TestStandingOn(t *testing.T) {
	t.Parallel()
	none := domain.Standing{}
	seen := func(l authz.Level) domain.Standing { return domain.Standing{Visible: true, Level: l} }
	for _, tc := range []struct {
		name string
		p    actor.Principal
		r    authorize.Resource
		want domain.Standing
	}{
		{"every principal reads the instance", tracker, authorize.Resource{Kind: authorize.KindInstance}, seen(authz.LevelRead)},
		{"owners administer the instance", robin, authorize.Resource{Kind: authorize.KindInstance}, seen(authz.LevelAdmin)},
		{"every principal reads the collection of spaces", alex, authorize.Resource{Kind: authorize.KindSpace}, seen(authz.LevelRead)},
		{"a member holds the level of the membership on the space", alex, authorize.Resource{Kind: authorize.KindSpace, ID: support}, seen(authz.LevelWrite)},
		{"an app sees the space of its channel grant with read", tracker, authorize.Resource{Kind: authorize.KindSpace, ID: support}, seen(authz.LevelRead)},
		{"an app sees no other space", tracker, authorize.Resource{Kind: authorize.KindSpace, ID: marketing}, none},
		{"the channels of a space stand like the space", tracker, authorize.Resource{Kind: authorize.KindChannel, SpaceID: support}, seen(authz.LevelRead)},
		{"an app holds its grant on the channel", tracker, channel(support, eskalation), seen(authz.LevelWrite)},
		{"an app does not see a channel of its space without a grant on it", tracker, channel(support, allgemein), none},
		{"a thread stands like its channel", tracker, authorize.Resource{Kind: authorize.KindThread, SpaceID: support, ChannelID: eskalation}, seen(authz.LevelWrite)},
		{"a member sees every channel of the space", sam, channel(support, eskalation), seen(authz.LevelWrite)},
		{"an owner sees every channel", robin, channel(marketing, kampagnen), seen(authz.LevelAdmin)},
		{"apps are visible to owners only", alex, authorize.Resource{Kind: authorize.KindApp, ID: appID}, none},
		{"owners see apps", robin, authorize.Resource{Kind: authorize.KindApp, ID: appID}, seen(authz.LevelAdmin)},
		{"webhook deliveries are visible to owners only", tracker, authorize.Resource{Kind: authorize.KindWebhookDelivery, ID: appID}, none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.StandingOn(tc.p, tc.r, factsOf(tc.p))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestLevels(t *testing.T) {
	t.Parallel()
	require.True(t, authz.LevelAdmin.Covers(authz.LevelWrite))
	require.True(t, authz.LevelWrite.Covers(authz.LevelWrite))
	require.False(t, authz.LevelRead.Covers(authz.LevelWrite))
	require.False(t, authz.Level("").Covers(authz.LevelRead))
	require.False(t, authz.LevelAdmin.Covers("owner"))
	require.Equal(t, authz.LevelWrite, authz.Max(authz.LevelRead, authz.LevelWrite))
	require.Equal(t, authz.LevelRead, authz.Max(authz.LevelRead, ""))
	require.False(t, authz.Level("root").Valid())
}

// TestPlaceOfIsWhereAnAppsGrantDecides: for every kind of resource, an app
// with a grant exactly on the place PlaceOf names sees the resource, and
// for the kinds PlaceOf does not place, grants do not decide (the
// instance is visible without one, owner-only kinds are not visible with
// one). The delivery router relies on it to find the apps an event can
// reach.
func TestPlaceOfIsWhereAnAppsGrantDecides(t *testing.T) {
	t.Parallel()
	space, channel := ids.New(), ids.New()
	app := actor.Principal{ID: ids.New(), Kind: actor.KindApp, InstallationActive: true}
	for _, tc := range []struct {
		name   string
		r      authorize.Resource
		placed bool
	}{
		{"a message", authorize.Resource{Kind: authorize.KindMessage, ID: ids.New(), SpaceID: space, ChannelID: channel}, true},
		{"a thread", authorize.Resource{Kind: authorize.KindThread, ID: ids.New(), SpaceID: space, ChannelID: channel}, true},
		{"a channel by its ID", authorize.Resource{Kind: authorize.KindChannel, ID: channel, SpaceID: space}, true},
		{"a space by its ID", authorize.Resource{Kind: authorize.KindSpace, ID: space}, true},
		{"the instance", authorize.Resource{Kind: authorize.KindInstance}, false},
		{"an app", authorize.Resource{Kind: authorize.KindApp, ID: ids.New()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			at, placed := domain.PlaceOf(tc.r)
			require.Equal(t, tc.placed, placed)
			without, err := domain.StandingOn(app, tc.r, domain.Facts{})
			require.NoError(t, err)
			if !placed {
				with, err := domain.StandingOn(app, tc.r, domain.Facts{Grants: []domain.GrantFact{{SpaceID: space, Level: authz.LevelAdmin}}})
				require.NoError(t, err)
				require.Equal(t, without.Visible, with.Visible, "grants do not decide an unplaced resource")
				return
			}
			require.False(t, without.Visible, "without a grant the app does not see it")
			with, err := domain.StandingOn(app, tc.r, domain.Facts{Grants: []domain.GrantFact{{SpaceID: at.Space, ChannelID: at.Channel, Level: authz.LevelRead}}})
			require.NoError(t, err)
			require.True(t, with.Visible, "a grant on the place makes it visible")
		})
	}
}
