package webhook_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
)

var settleNow = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

func TestStandingApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		from   webhook.Standing
		ev     webhook.SubscriptionEvent
		want   webhook.Standing
		tr     webhook.Transition
		change bool
	}{
		{"a gap disables an active subscription from now and keeps its failures",
			webhook.Standing{State: apps.SubscriptionActive, ConsecutiveFailures: 2}, webhook.EventGap,
			webhook.Standing{State: apps.SubscriptionDisabled, DisabledAt: settleNow, ConsecutiveFailures: 2},
			webhook.Transition{From: apps.SubscriptionActive, To: apps.SubscriptionDisabled, Cause: "gap"}, true},
		{"the quota pauses an active subscription without a disabled time",
			webhook.Standing{State: apps.SubscriptionActive}, webhook.EventMaxPending,
			webhook.Standing{State: apps.SubscriptionPaused},
			webhook.Transition{From: apps.SubscriptionActive, To: apps.SubscriptionPaused, Cause: "max_pending"}, true},
		{"an uninstall disables a paused subscription and names no cause",
			webhook.Standing{State: apps.SubscriptionPaused}, webhook.EventUninstall,
			webhook.Standing{State: apps.SubscriptionDisabled, DisabledAt: settleNow},
			webhook.Transition{From: apps.SubscriptionPaused, To: apps.SubscriptionDisabled}, true},
		{"the quota on a paused subscription changes nothing",
			webhook.Standing{State: apps.SubscriptionPaused}, webhook.EventMaxPending,
			webhook.Standing{State: apps.SubscriptionPaused}, webhook.Transition{}, false},
		{"a 410 on a disabled subscription keeps its disabled time",
			webhook.Standing{State: apps.SubscriptionDisabled, DisabledAt: settleNow.Add(-time.Hour)}, webhook.EventGone,
			webhook.Standing{State: apps.SubscriptionDisabled, DisabledAt: settleNow.Add(-time.Hour)}, webhook.Transition{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, tr, ok, err := tc.from.Apply(tc.ev, settleNow)
			require.NoError(t, err)
			require.Equal(t, tc.change, ok)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.tr, tr)
		})
	}
}

func TestStandingApplyRejectsAnUnknownState(t *testing.T) {
	t.Parallel()
	_, _, ok, err := webhook.Standing{State: "sleeping"}.Apply(webhook.EventGap, settleNow)
	require.Error(t, err)
	require.False(t, ok)
}
