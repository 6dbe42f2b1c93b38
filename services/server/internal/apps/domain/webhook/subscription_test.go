package webhook_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
)

func TestSubscriptionTransitions(t *testing.T) {
	t.Parallel()
	const (
		active   = apps.SubscriptionActive
		paused   = apps.SubscriptionPaused
		disabled = apps.SubscriptionDisabled
	)
	// allowed lists every transition of D-M2-26-29; every other pair of
	// state and event must be rejected and change nothing.
	allowed := map[webhook.SubscriptionEvent]map[apps.SubscriptionState]apps.SubscriptionState{
		webhook.EventOwnerPause:             {active: paused, disabled: paused},
		webhook.EventOwnerResume:            {paused: active, disabled: active},
		webhook.EventGone:                   {active: disabled, paused: disabled},
		webhook.EventMaxConsecutiveFailures: {active: disabled, paused: disabled},
		webhook.EventRetryMaxAge:            {active: disabled, paused: disabled},
		webhook.EventGap:                    {active: disabled, paused: disabled},
		webhook.EventMaxPending:             {active: paused},
		webhook.EventUninstall:              {active: disabled, paused: disabled},
	}
	require.ElementsMatch(t, webhook.SubscriptionEvents(), slices.Collect(maps.Keys(allowed)), "the table covers every event")

	for ev, from := range allowed {
		for _, cur := range []apps.SubscriptionState{active, paused, disabled} {
			want, ok := from[cur]
			name := string(ev) + " from " + string(cur)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				got, err := webhook.NextSubscriptionState(cur, ev)
				if ok {
					require.NoError(t, err)
					require.Equal(t, want, got)
					return
				}
				require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
				require.Equal(t, domain.ReasonInvalidStateTransition, errs.ReasonOf(err))
				require.Equal(t, cur, got, "a rejected event changes nothing")
			})
		}
	}
}

func TestSubscriptionTransitionsRejectUnknownValues(t *testing.T) {
	t.Parallel()
	got, err := webhook.NextSubscriptionState("archived", webhook.EventOwnerPause)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
	require.Equal(t, apps.SubscriptionState("archived"), got)

	got, err = webhook.NextSubscriptionState(apps.SubscriptionActive, "owner_delete")
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
	require.Equal(t, apps.SubscriptionActive, got)
}

func TestSubscriptionEventCauses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ev     webhook.SubscriptionEvent
		cause  string
		system bool
	}{
		{webhook.EventOwnerPause, "", false},
		{webhook.EventOwnerResume, "", false},
		{webhook.EventUninstall, "", false},
		{webhook.EventGone, "gone", true},
		{webhook.EventMaxConsecutiveFailures, "max_consecutive_failures", true},
		{webhook.EventRetryMaxAge, "retry_max_age", true},
		{webhook.EventGap, "gap", true},
		{webhook.EventMaxPending, "max_pending", true},
	} {
		cause, system := tc.ev.Cause()
		require.Equal(t, tc.cause, cause, tc.ev)
		require.Equal(t, tc.system, system, tc.ev)
	}
}

func TestDeliveryStatuses(t *testing.T) {
	t.Parallel()
	require.Equal(t, []apps.DeliveryStatus{"pending", "succeeded", "failed", "dead"}, []apps.DeliveryStatus{
		apps.DeliveryPending, apps.DeliverySucceeded, apps.DeliveryFailed, apps.DeliveryDead,
	})
}
