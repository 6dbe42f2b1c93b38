package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
)

func TestSettle(t *testing.T) {
	t.Parallel()
	policy := webhook.Policy{
		Retry:                  webhook.RetryConfig{Base: time.Second, Cap: time.Minute, MaxAge: time.Hour},
		MaxConsecutiveFailures: 3,
	}
	active := webhook.Standing{State: apps.SubscriptionActive, ConsecutiveFailures: 1}
	young := settleNow.Add(-time.Minute)
	old := settleNow.Add(-time.Hour)
	tests := []struct {
		name   string
		a      webhook.Attempt
		before webhook.Standing
		want   webhook.Settlement
	}{
		{"a 2xx succeeds, resets the failures and names the key",
			webhook.Attempt{Number: 2, CreatedAt: young, StatusCode: 204}, active,
			webhook.Settlement{Outcome: webhook.Classify(204, nil), Status: apps.DeliverySucceeded, DeliveredAt: settleNow,
				StoredAttempt: 2, ResponseCode: 204, Standing: webhook.Standing{State: apps.SubscriptionActive},
				SubscriptionChanged: true, Delivered: true}},
		{"a 410 fails the delivery and disables the subscription",
			webhook.Attempt{Number: 1, CreatedAt: young, StatusCode: 410}, active,
			webhook.Settlement{Outcome: webhook.Classify(410, nil), Status: apps.DeliveryFailed, StoredAttempt: 1, ResponseCode: 410,
				Standing:            webhook.Standing{State: apps.SubscriptionDisabled, DisabledAt: settleNow, ConsecutiveFailures: 1},
				SubscriptionChanged: true, Transitioned: true,
				Transition: webhook.Transition{From: apps.SubscriptionActive, To: apps.SubscriptionDisabled, Cause: "gone"}}},
		{"a throttle waits for Retry-After and leaves the subscription as it is",
			webhook.Attempt{Number: 1, CreatedAt: young, StatusCode: 503, RetryAfter: "30"}, active,
			webhook.Settlement{Outcome: webhook.Classify(503, nil), Status: apps.DeliveryPending, NextAttemptAt: settleNow.Add(30 * time.Second),
				StoredAttempt: 1, ResponseCode: 503, Standing: active}},
		{"a counted failure waits for the backoff and counts",
			webhook.Attempt{Number: 1, CreatedAt: young, StatusCode: 500}, active,
			webhook.Settlement{Outcome: webhook.Classify(500, nil), Status: apps.DeliveryPending, NextAttemptAt: settleNow.Add(time.Second),
				StoredAttempt: 1, ResponseCode: 500,
				Standing:            webhook.Standing{State: apps.SubscriptionActive, ConsecutiveFailures: 2},
				SubscriptionChanged: true}},
		{"the failure that reaches the limit disables and keeps the head pending",
			webhook.Attempt{Number: 3, CreatedAt: young, StatusCode: 500}, webhook.Standing{State: apps.SubscriptionActive, ConsecutiveFailures: 2},
			webhook.Settlement{Outcome: webhook.Classify(500, nil), Status: apps.DeliveryPending, NextAttemptAt: settleNow.Add(4 * time.Second),
				StoredAttempt: 3, ResponseCode: 500,
				Standing:            webhook.Standing{State: apps.SubscriptionDisabled, DisabledAt: settleNow, ConsecutiveFailures: 3},
				SubscriptionChanged: true, Transitioned: true,
				Transition: webhook.Transition{From: apps.SubscriptionActive, To: apps.SubscriptionDisabled, Cause: "max_consecutive_failures"}}},
		{"a failure after the retry window is dead and disables",
			webhook.Attempt{Number: 4, CreatedAt: old, StatusCode: 500}, active,
			webhook.Settlement{Outcome: webhook.Classify(500, nil), Status: apps.DeliveryDead, StoredAttempt: 4, ResponseCode: 500,
				Standing:            webhook.Standing{State: apps.SubscriptionDisabled, DisabledAt: settleNow, ConsecutiveFailures: 2},
				SubscriptionChanged: true, Transitioned: true,
				Transition: webhook.Transition{From: apps.SubscriptionActive, To: apps.SubscriptionDisabled, Cause: "retry_max_age"}}},
		{"a timeout keeps no response code",
			webhook.Attempt{Number: 1, CreatedAt: young, TransportErr: context.DeadlineExceeded}, active,
			webhook.Settlement{Outcome: webhook.Classify(0, context.DeadlineExceeded), Status: apps.DeliveryPending,
				NextAttemptAt: settleNow.Add(time.Second), StoredAttempt: 1,
				Standing:            webhook.Standing{State: apps.SubscriptionActive, ConsecutiveFailures: 2},
				SubscriptionChanged: true}},
		{"a refusal of the egress guard is no attempt and backs off by the failures in a row",
			webhook.Attempt{Number: 1, CreatedAt: young, TransportErr: &blockedError{reason: "address_blocked"}},
			webhook.Standing{State: apps.SubscriptionActive, ConsecutiveFailures: 1},
			webhook.Settlement{Outcome: webhook.Classify(0, &blockedError{reason: "address_blocked"}), Status: apps.DeliveryPending,
				NextAttemptAt: settleNow.Add(2 * time.Second), StoredAttempt: 0,
				Standing:            webhook.Standing{State: apps.SubscriptionActive, ConsecutiveFailures: 2},
				SubscriptionChanged: true}},
		{"a 410 of an attempt a paused subscription still had in flight disables it",
			webhook.Attempt{Number: 1, CreatedAt: young, StatusCode: 410}, webhook.Standing{State: apps.SubscriptionPaused},
			webhook.Settlement{Outcome: webhook.Classify(410, nil), Status: apps.DeliveryFailed, StoredAttempt: 1, ResponseCode: 410,
				Standing:            webhook.Standing{State: apps.SubscriptionDisabled, DisabledAt: settleNow},
				SubscriptionChanged: true, Transitioned: true,
				Transition: webhook.Transition{From: apps.SubscriptionPaused, To: apps.SubscriptionDisabled, Cause: "gone"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := webhook.Settle(tc.a, tc.before, policy, settleNow, rndMax)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestSettleRejectsAnUnknownState(t *testing.T) {
	t.Parallel()
	_, err := webhook.Settle(webhook.Attempt{Number: 1, StatusCode: 410}, webhook.Standing{State: "sleeping"},
		webhook.Policy{MaxConsecutiveFailures: 1}, settleNow, rndMax)
	require.Error(t, err)
}
