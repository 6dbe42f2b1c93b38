package harness_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	appsapp "bothy/server/internal/apps/app"
	chatapp "bothy/server/internal/chat/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/test/harness"
)

// TestPermissionMatrix runs the matrix of docs/spec/07-permissions.md 11.1
// in the world of BuildMatrixWorld: principals from their real tokens, the
// real authorizer, denials audited once each. The rows that need another
// state of Tracker (AZ-M4, AZ-M5) reach it through the real apps use
// cases and authenticate again.
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	w := harness.BuildMatrixWorld(t, pgtest.New(t))
	az := w.Services.Authorizer
	channel := func(id ids.ID) authorize.Resource {
		return authorize.Resource{Kind: authorize.KindChannel, ID: id, SpaceID: w.Support, ChannelID: id}
	}
	marketing := authorize.Resource{Kind: authorize.KindSpace, ID: w.Marketing, SpaceID: w.Marketing}
	rows := []struct {
		name    string
		token   func(t *testing.T) string
		action  authorize.Action
		r       authorize.Resource
		outcome authorize.Outcome
		reason  string
	}{
		{"AZ-M1 Tracker posts in Eskalation (G-6)", tracker(w), authorize.MessagePost, channel(w.Eskalation), authorize.Allow, ""},
		{"AZ-M2 Tracker cannot post in Allgemein", tracker(w), authorize.MessagePost, channel(w.Allgemein), authorize.NotFound, "no_grant"},
		{"AZ-M3 Alex cannot see Marketing", person(w.Alex), authorize.SpaceRead, marketing, authorize.NotFound, "no_grant"},
		{"AZ-M6 Alex posts in Allgemein", person(w.Alex), authorize.MessagePost, channel(w.Allgemein), authorize.Allow, ""},
		{"AZ-M7 Sam reads Eskalation", person(w.Sam), authorize.MessageRead, channel(w.Eskalation), authorize.Allow, ""},
		{"AZ-M8 Robin reads Marketing", person(w.Robin), authorize.SpaceRead, marketing, authorize.Allow, ""},
		{"AZ-M9 Alex may not create a space", person(w.Alex), authorize.SpaceManage, authorize.Resource{Kind: authorize.KindSpace}, authorize.NotFound, "owner_only"},
		{"AZ-M10 Alex cannot see an app (AZ-P4)", person(w.Alex), authorize.AppRead, authorize.Resource{Kind: authorize.KindApp, ID: w.Tracker.ID}, authorize.NotFound, "owner_only"},
		{"AZ-M11 Tracker reads the instance without a scope for it", tracker(w), authorize.InstanceRead, authorize.Resource{Kind: authorize.KindInstance}, authorize.Allow, ""},
		{"AZ-M4 Tracker without messages:write", withoutWrite(w), authorize.MessagePost, channel(w.Eskalation), authorize.Forbidden, "scope_missing"},
		{"AZ-M5 Tracker with a suspended installation", suspended(w), authorize.MessagePost, channel(w.Eskalation), authorize.Forbidden, "app_not_installed"},
	}
	for _, row := range rows {
		// The rows run in order on one world: each finds its denial as the
		// one row its decision added, and AZ-M4 and AZ-M5 change Tracker
		// last.
		t.Run(row.name, func(t *testing.T) {
			p := w.Authenticate(t, row.token(t))
			before := denials(t, w)
			d, err := az.Authorize(context.Background(), p, row.action, row.r)
			require.NoError(t, err)
			require.Equal(t, authorize.Decision{Outcome: row.outcome, Reason: row.reason}, d)
			fresh := added(before, denials(t, w))
			if row.outcome == authorize.Allow {
				require.Empty(t, fresh, "allows are audited by the use case, not the authorizer")
				return
			}
			require.Len(t, fresh, 1)
			require.Equal(t, string(row.action), fresh[0].Action)
			require.Equal(t, row.reason, fresh[0].Reason)
			require.Equal(t, p.ID, fresh[0].ActorID)
		})
	}
}

// TestFilterModeWritesNoDenial is AZ-P13: the same refused decision in
// filter mode writes no audit entry, in normal mode exactly one.
func TestFilterModeWritesNoDenial(t *testing.T) {
	t.Parallel()
	w := harness.BuildMatrixWorld(t, pgtest.New(t))
	p := w.Authenticate(t, w.Tracker.Token)
	allgemein := authorize.Resource{Kind: authorize.KindChannel, ID: w.Allgemein, SpaceID: w.Support, ChannelID: w.Allgemein}
	before := len(denials(t, w))
	d, err := w.Services.Authorizer.Authorize(authorize.Filter(context.Background()), p, authorize.MessageRead, allgemein)
	require.NoError(t, err)
	require.Equal(t, authorize.NotFound, d.Outcome)
	require.Len(t, denials(t, w), before, "filter mode writes nothing")
	_, err = w.Services.Authorizer.Authorize(context.Background(), p, authorize.MessageRead, allgemein)
	require.NoError(t, err)
	require.Len(t, denials(t, w), before+1, "normal mode audits the denial")
}

// TestMatrixExamples runs the examples of 07 10 through the real use
// cases, as the API would.
func TestMatrixExamples(t *testing.T) {
	t.Parallel()
	w := harness.BuildMatrixWorld(t, pgtest.New(t))
	chat := w.Services.Chat

	t.Run("Tracker sees Support but may not list its channels without channels:read", func(t *testing.T) {
		ctx := w.As(t, w.Tracker.Token)
		spaces, err := chat.ListSpaces(ctx)
		require.NoError(t, err)
		require.Len(t, spaces, 1)
		require.Equal(t, w.Support, spaces[0].ID)
		_, err = chat.ListChannels(ctx, w.Support)
		require.Equal(t, errs.CodeForbidden, errs.CodeOf(err))
		require.Equal(t, "scope_missing", errs.ReasonOf(err))
	})

	t.Run("Alex and Robin's personal token may not create a space", func(t *testing.T) {
		for _, token := range []string{w.Alex.Token, w.RobinPersonalToken} {
			_, err := chat.CreateSpace(w.As(t, token), chatapp.CreateSpace{Name: "Vertrieb"})
			require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
		}
	})

	t.Run("Robin installs an app only with a fresh step-up", func(t *testing.T) {
		m := harness.TrackerManifest()
		m.Name = "Helper"
		a, err := w.Services.Apps.RegisterApp(w.As(t, w.Robin.Token), appsapp.RegisterApp{Manifest: m})
		require.NoError(t, err)
		w.Clock.Advance(w.Services.Config.Identity.StepUpMaxAge + time.Second)
		_, err = w.Services.Apps.InstallApp(w.As(t, w.Robin.Token), appsapp.InstallApp{AppID: a.ID})
		require.Equal(t, errs.CodeStepUpRequired, errs.CodeOf(err))
	})
}

func denials(t *testing.T, w *harness.World) []audittest.Row {
	t.Helper()
	return audittest.List(t, w.Services.DB.App, audittest.Filter{Outcome: "deny"})
}

// added returns the rows of after whose IDs are not in before: the fake
// clock stamps every entry with the same time, so order says nothing.
func added(before, after []audittest.Row) []audittest.Row {
	seen := map[ids.ID]bool{}
	for _, r := range before {
		seen[r.ID] = true
	}
	var out []audittest.Row
	for _, r := range after {
		if !seen[r.ID] {
			out = append(out, r)
		}
	}
	return out
}

func person(p harness.Person) func(*testing.T) string {
	return func(*testing.T) string { return p.Token }
}

func tracker(w *harness.World) func(*testing.T) string {
	return func(*testing.T) string { return w.Tracker.Token }
}

// withoutWrite takes messages:write from Tracker through setAppScopes and
// returns its token.
func withoutWrite(w *harness.World) func(*testing.T) string {
	return func(t *testing.T) string {
		_, err := w.Services.Apps.SetAppScopes(robin(t, w), appsapp.SetAppScopes{AppID: w.Tracker.ID,
			Scopes: []string{"events:subscribe", "messages:read"}})
		require.NoError(t, err)
		return w.Tracker.Token
	}
}

// suspended suspends Tracker through suspendApp and returns its token.
func suspended(w *harness.World) func(*testing.T) string {
	return func(t *testing.T) string {
		_, err := w.Services.Apps.SuspendApp(robin(t, w), w.Tracker.ID)
		require.NoError(t, err)
		return w.Tracker.Token
	}
}

func robin(t *testing.T, w *harness.World) context.Context {
	t.Helper()
	return actor.With(context.Background(), w.Authenticate(t, w.Robin.Token))
}
