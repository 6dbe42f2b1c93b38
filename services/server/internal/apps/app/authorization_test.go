package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/test/harness"
)

// operation is one use case called on the app appID.
type operation struct {
	name   string
	stepUp bool
	call   func(ctx context.Context, appID ids.ID) error
}

func operations(b *testBundle) []operation {
	return []operation{
		{"register an app", true, func(ctx context.Context, _ ids.ID) error {
			_, err := b.svc.RegisterApp(ctx, app.RegisterApp{Manifest: harness.TrackerManifest()})
			return err
		}},
		{"list apps", false, func(ctx context.Context, _ ids.ID) error {
			_, err := b.svc.ListApps(ctx)
			return err
		}},
		{"get an app", false, func(ctx context.Context, appID ids.ID) error {
			_, err := b.svc.GetApp(ctx, appID)
			return err
		}},
		{"install an app", true, func(ctx context.Context, appID ids.ID) error {
			_, err := b.svc.InstallApp(ctx, app.InstallApp{AppID: appID})
			return err
		}},
		{"uninstall an app", true, func(ctx context.Context, appID ids.ID) error {
			return b.svc.UninstallApp(ctx, appID)
		}},
		{"suspend an app", true, func(ctx context.Context, appID ids.ID) error {
			_, err := b.svc.SuspendApp(ctx, appID)
			return err
		}},
		{"resume an app", true, func(ctx context.Context, appID ids.ID) error {
			_, err := b.svc.ResumeApp(ctx, appID)
			return err
		}},
		{"set the scopes of an app", true, func(ctx context.Context, appID ids.ID) error {
			_, err := b.svc.SetAppScopes(ctx, app.SetAppScopes{AppID: appID, Scopes: []string{"events:subscribe"}})
			return err
		}},
		{"list the grants of an app", false, func(ctx context.Context, appID ids.ID) error {
			_, err := b.svc.ListAppGrants(ctx, appID)
			return err
		}},
		{"grant an app a level", true, func(ctx context.Context, appID ids.ID) error {
			_, err := b.svc.CreateAppGrant(ctx, app.CreateAppGrant{AppID: appID, SpaceID: b.Marketing, Level: authz.LevelRead})
			return err
		}},
		{"revoke a grant of an app", true, func(ctx context.Context, appID ids.ID) error {
			return b.svc.DeleteAppGrant(ctx, appID, b.G6.ID)
		}},
	}
}

// TestAuthorizationOutcomes: every use case answers anyone but an owner in
// a session exactly like an unknown app (404), needs a fresh step-up for
// changes (401 step_up_required), and changes nothing when it refuses.
func TestAuthorizationOutcomes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ops := operations(b)
	callers := []struct {
		name  string
		token string
	}{
		{"Alex, a member", b.Alex.Token},
		{"Robin through a personal token", b.RobinPersonalToken},
		{"Tracker with its app token", b.Tracker.Token},
	}
	for _, c := range callers {
		for _, op := range ops {
			t.Run(c.name+" cannot "+op.name, func(t *testing.T) {
				err := op.call(b.As(t, c.token), b.Tracker.ID)
				require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
				require.Empty(t, errs.ReasonOf(err), "not_found never says why")
			})
		}
	}
	for _, op := range ops {
		if op.name == "register an app" || op.name == "list apps" {
			continue
		}
		t.Run("an unknown app answers "+op.name+" like an invisible one", func(t *testing.T) {
			err := op.call(b.robin(t), ids.New())
			require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
		})
	}

	denials := audittest.List(t, b.Services.DB.App, audittest.Filter{ResourceKind: "app", Outcome: "deny"})
	require.Len(t, denials, len(callers)*len(ops),
		"the authorizer audits each refusal once; Robin's lookups of unknown IDs are no denials")

	b.staleStepUp()
	for _, op := range ops {
		t.Run("Robin with a stale step-up and "+op.name, func(t *testing.T) {
			err := op.call(b.robin(t), b.Tracker.ID)
			if op.stepUp {
				require.Equal(t, errs.CodeStepUpRequired, errs.CodeOf(err))
				return
			}
			require.NoError(t, err, "reads need no step-up")
		})
	}

	inst, ok := b.current(t, b.Tracker.ID)
	require.True(t, ok)
	require.Equal(t, apps.InstallationActive, inst.State, "no refused call changed the installation")
	require.Equal(t, harness.TrackerScopes, inst.GrantedScopes)
	grants, err := b.Services.Grants.ListForPrincipal(context.Background(), b.Tracker.PrincipalID)
	require.NoError(t, err)
	require.Equal(t, []authz.Grant{b.G6}, grants)
	list, err := b.Services.AppsStore.Apps(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1, "no app was registered")
	require.Len(t, b.installationEvents(t, b.Tracker.InstallationID), 1, "only the install appended an event")
}
