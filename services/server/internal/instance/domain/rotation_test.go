package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/domain"
)

var (
	t0     = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	policy = domain.Policy{PublishAhead: time.Hour, MaxAge: 90 * 24 * time.Hour}
)

func active(kid string, at time.Time) domain.Key {
	return domain.Key{KID: kid, State: instance.KeyActive, CreatedAt: at, ActivatedAt: at}
}

func next(kid string, at time.Time) domain.Key {
	return domain.Key{KID: kid, State: instance.KeyNext, CreatedAt: at}
}

func retiring(kid string, notAfter time.Time) domain.Key {
	return domain.Key{KID: kid, State: instance.KeyRetiring, CreatedAt: t0, ActivatedAt: t0, NotAfter: notAfter}
}

func TestPlanRotation(t *testing.T) {
	t.Parallel()
	// The next key is created MaxAge - PublishAhead after activation.
	creationDue := t0.Add(policy.MaxAge - policy.PublishAhead)
	for _, tc := range []struct {
		name    string
		keys    []domain.Key
		now     time.Time
		trigger domain.Trigger
		want    []domain.Step
	}{
		{"a purpose without keys gets an active key on ensure", nil, t0, domain.TriggerEnsure,
			[]domain.Step{{Kind: domain.StepCreateActive}}},
		{"a purpose without keys gets an active key when due", nil, t0, domain.TriggerDue,
			[]domain.Step{{Kind: domain.StepCreateActive}}},
		{"ensure leaves an active key alone however old", []domain.Key{active("a", t0)}, t0.Add(10 * policy.MaxAge), domain.TriggerEnsure, nil},
		{"ensure promotes a lonely next key at once", []domain.Key{next("n", t0)}, t0, domain.TriggerEnsure,
			[]domain.Step{{Kind: domain.StepPromote, KID: "n"}}},
		{"ensure does not retire", []domain.Key{active("a", t0), retiring("r", t0)}, t0.Add(10 * policy.PublishAhead), domain.TriggerEnsure, nil},
		{"a young active key needs nothing", []domain.Key{active("a", t0)}, creationDue.Add(-time.Nanosecond), domain.TriggerDue, nil},
		{"the scheduled rotation creates the next key at MaxAge minus PublishAhead", []domain.Key{active("a", t0)}, creationDue, domain.TriggerDue,
			[]domain.Step{{Kind: domain.StepCreateNext}}},
		{"a manual rotation creates the next key at once", []domain.Key{active("a", t0)}, t0, domain.TriggerManual,
			[]domain.Step{{Kind: domain.StepCreateNext}}},
		{"a next key younger than PublishAhead is not promoted", []domain.Key{active("a", t0), next("n", t0)}, t0.Add(policy.PublishAhead - time.Nanosecond), domain.TriggerManual, nil},
		{"a next key PublishAhead old is promoted", []domain.Key{active("a", t0), next("n", t0)}, t0.Add(policy.PublishAhead), domain.TriggerDue,
			[]domain.Step{{Kind: domain.StepPromote, KID: "n", Previous: "a"}}},
		{"a manual rotation never creates a second next key", []domain.Key{active("a", t0), next("n", t0.Add(time.Minute))}, t0.Add(2 * time.Minute), domain.TriggerManual, nil},
		{"a retiring key stays published PublishAhead after not_after", []domain.Key{active("a", t0), retiring("r", t0)}, t0.Add(policy.PublishAhead - time.Nanosecond), domain.TriggerDue, nil},
		{"a retiring key is retired PublishAhead after not_after", []domain.Key{active("a", t0), retiring("r", t0)}, t0.Add(policy.PublishAhead), domain.TriggerDue,
			[]domain.Step{{Kind: domain.StepRetire, KID: "r"}}},
		{"retirements come first, in kid order, then the promotion",
			[]domain.Key{active("a", t0), next("n", t0), retiring("r2", t0), retiring("r1", t0)}, t0.Add(policy.PublishAhead), domain.TriggerDue,
			[]domain.Step{{Kind: domain.StepRetire, KID: "r1"}, {Kind: domain.StepRetire, KID: "r2"}, {Kind: domain.StepPromote, KID: "n", Previous: "a"}}},
		{"retired keys are ignored", []domain.Key{{KID: "x", State: instance.KeyRetired}}, t0, domain.TriggerEnsure,
			[]domain.Step{{Kind: domain.StepCreateActive}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, domain.PlanRotation(tc.keys, tc.now, policy, tc.trigger))
		})
	}
}

// TestNextDueIsTheFirstInstantWithAStep checks NextDue against PlanRotation:
// nothing is due a nanosecond before it, something is due at it.
func TestNextDueIsTheFirstInstantWithAStep(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys []domain.Key
		want time.Time
	}{
		{"an active key alone: the scheduled next key", []domain.Key{active("a", t0)}, t0.Add(policy.MaxAge - policy.PublishAhead)},
		{"with a next key: its promotion", []domain.Key{active("a", t0), next("n", t0.Add(time.Minute))}, t0.Add(time.Minute + policy.PublishAhead)},
		{"a retiring key that leaves earlier", []domain.Key{active("a", t0), next("n", t0.Add(time.Hour)), retiring("r", t0.Add(time.Minute))}, t0.Add(time.Minute + policy.PublishAhead)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			due := domain.NextDue(tc.keys, policy)
			require.Equal(t, tc.want, due)
			require.Empty(t, domain.PlanRotation(tc.keys, due.Add(-time.Nanosecond), policy, domain.TriggerDue))
			require.NotEmpty(t, domain.PlanRotation(tc.keys, due, policy, domain.TriggerDue))
		})
	}
	require.True(t, domain.NextDue(nil, policy).IsZero(), "a purpose without an active key is due at once")
}
