package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
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
