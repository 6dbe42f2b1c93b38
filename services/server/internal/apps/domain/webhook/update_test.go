package webhook_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/errs"
)

func ptr[T any](v T) *T { return &v }

func TestPlanUpdate(t *testing.T) {
	t.Parallel()
	created := settleNow.Add(-time.Hour)
	sub := apps.Subscription{
		URL: "https://hooks.example.com/tracker", EventTypes: []string{"message.created"},
		State: apps.SubscriptionDisabled, HMACEnabled: true, HMACGeneration: 1,
		ConsecutiveFailures: 5, DisabledAt: created, CreatedAt: created, UpdatedAt: created,
	}
	tests := []struct {
		name    string
		update  webhook.Update
		changes []string
		resumed bool
		rotated bool
		next    func(s *apps.Subscription)
	}{
		{"nothing set changes nothing", webhook.Update{}, nil, false, false, nil},
		{"the same address and types change nothing",
			webhook.Update{URL: ptr(sub.URL), EventTypes: ptr([]string{"message.created"})}, nil, false, false, nil},
		{"a new address is an update",
			webhook.Update{URL: ptr("https://hooks.example.com/v2")}, []string{"updated"}, false, false,
			func(s *apps.Subscription) { s.URL = "https://hooks.example.com/v2" }},
		{"a re-enable clears the failures and the disabled time and makes the head due",
			webhook.Update{State: ptr(apps.SubscriptionActive)}, []string{"resumed"}, true, false,
			func(s *apps.Subscription) {
				s.State, s.ConsecutiveFailures, s.DisabledAt = apps.SubscriptionActive, 0, time.Time{}
			}},
		{"a pause from disabled keeps the failures",
			webhook.Update{State: ptr(apps.SubscriptionPaused)}, []string{"paused"}, false, false,
			func(s *apps.Subscription) { s.State, s.DisabledAt = apps.SubscriptionPaused, time.Time{} }},
		{"a rotation raises the generation from now",
			webhook.Update{RotateHMACSecret: true}, []string{"rotated"}, false, true,
			func(s *apps.Subscription) { s.HMACGeneration, s.HMACRotatedAt = 2, settleNow }},
		{"every kind of change is named once, in order",
			webhook.Update{EventTypes: ptr([]string{"message.created", "message.updated"}), State: ptr(apps.SubscriptionActive), RotateHMACSecret: true},
			[]string{"updated", "resumed", "rotated"}, true, true,
			func(s *apps.Subscription) {
				s.EventTypes = []string{"message.created", "message.updated"}
				s.State, s.ConsecutiveFailures, s.DisabledAt = apps.SubscriptionActive, 0, time.Time{}
				s.HMACGeneration, s.HMACRotatedAt = 2, settleNow
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan, err := webhook.PlanUpdate(sub, tc.update, settleNow)
			require.NoError(t, err)
			require.Equal(t, tc.changes, plan.Changes)
			require.Equal(t, tc.resumed, plan.Resumed)
			require.Equal(t, tc.rotated, plan.Rotated)
			want := sub
			if tc.next != nil {
				want.EventTypes = append([]string(nil), sub.EventTypes...)
				tc.next(&want)
				want.UpdatedAt = settleNow
			}
			require.Equal(t, want, plan.Next)
		})
	}
}

func TestPlanUpdateRejectsAStateOwnersCannotSet(t *testing.T) {
	t.Parallel()
	_, err := webhook.PlanUpdate(apps.Subscription{State: apps.SubscriptionActive},
		webhook.Update{State: ptr(apps.SubscriptionDisabled)}, settleNow)
	e, ok := errs.As(err)
	require.True(t, ok)
	require.Equal(t, errs.CodeValidationFailed, e.Code)
	require.Equal(t, []errs.FieldError{{Pointer: "/state", Code: "enum"}}, e.Fields)
}

func TestPlanUpdateKeepsTheCallersEventTypes(t *testing.T) {
	t.Parallel()
	types := []string{"message.created", "message.updated"}
	plan, err := webhook.PlanUpdate(apps.Subscription{State: apps.SubscriptionActive, EventTypes: []string{"message.created"}},
		webhook.Update{EventTypes: &types}, settleNow)
	require.NoError(t, err)
	types[0] = "channel.created"
	require.Equal(t, []string{"message.created", "message.updated"}, plan.Next.EventTypes, "the plan holds a copy")
}

func TestPlanUpdateToTheStateItHasChangesNothing(t *testing.T) {
	t.Parallel()
	sub := apps.Subscription{State: apps.SubscriptionPaused, UpdatedAt: settleNow.Add(-time.Hour)}
	plan, err := webhook.PlanUpdate(sub, webhook.Update{State: ptr(apps.SubscriptionPaused)}, settleNow)
	require.NoError(t, err)
	require.Empty(t, plan.Changes)
	require.Equal(t, sub, plan.Next)
}
