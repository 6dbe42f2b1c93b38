package identitytest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/identity/identitytest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
)

func TestStepUpFresh(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	maxAge := 10 * time.Minute
	person := actor.Principal{ID: ids.New(), Kind: actor.KindPerson, Role: actor.RoleOwner, SessionID: ids.New()}
	with := func(p actor.Principal, f func(*actor.Principal)) actor.Principal { f(&p); return p }
	for _, tc := range []struct {
		name string
		p    actor.Principal
		want bool
	}{
		{"a step-up right now is fresh", with(person, func(p *actor.Principal) { p.SteppedUpAt = now }), true},
		{"a step-up exactly max age ago is fresh", with(person, func(p *actor.Principal) { p.SteppedUpAt = now.Add(-maxAge) }), true},
		{"a step-up older than max age is stale", with(person, func(p *actor.Principal) { p.SteppedUpAt = now.Add(-maxAge - time.Nanosecond) }), false},
		{"a session that never stepped up is stale", person, false},
		{"a personal token never counts", with(person, func(p *actor.Principal) { p.SteppedUpAt = now; p.ViaPersonalToken = true }), false},
		{"an app never counts", actor.Principal{ID: ids.New(), Kind: actor.KindApp, SteppedUpAt: now}, false},
		{"nobody never counts", actor.Principal{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, identitytest.StepUpFresh(tc.p, now, maxAge))
		})
	}
}
