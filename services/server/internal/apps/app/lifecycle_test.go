package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/authz"
	chatapp "bothy/server/internal/chat/app"
	"bothy/server/internal/kernel/errs"
)

func TestSuspendAndResumeApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	chat := b.Services.Chat
	post := func() error {
		_, err := chat.PostMessage(b.As(t, b.Tracker.Token), chatapp.PostMessage{ChannelID: b.Eskalation, Text: "Ticket for Alex"})
		return err
	}
	require.NoError(t, post())

	suspended, err := b.svc.SuspendApp(b.robin(t), b.Tracker.ID)
	require.NoError(t, err)
	require.Equal(t, apps.InstallationSuspended, suspended.State)
	require.Equal(t, b.Tracker.InstallationID, suspended.ID)
	require.Equal(t, b.Clock.Now(), suspended.UpdatedAt)
	require.True(t, suspended.UninstalledAt.IsZero())

	t.Run("a suspended app is refused but its token is kept", func(t *testing.T) {
		p := b.Authenticate(t, b.Tracker.Token)
		require.False(t, p.InstallationActive)
		err := post()
		require.Equal(t, errs.CodeForbidden, errs.CodeOf(err))
		require.Equal(t, domain.ReasonAppNotInstalled, errs.ReasonOf(err))
	})

	t.Run("suspending again changes nothing", func(t *testing.T) {
		_, err := b.svc.SuspendApp(b.robin(t), b.Tracker.ID)
		require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
		require.Equal(t, domain.ReasonInvalidStateTransition, errs.ReasonOf(err))
	})

	b.hooks.reset()
	resumed, err := b.svc.ResumeApp(b.robin(t), b.Tracker.ID)
	require.NoError(t, err)
	require.Equal(t, apps.InstallationActive, resumed.State)
	require.NoError(t, post(), "the same token works again")

	t.Run("resume runs the webhook hook in its transaction", func(t *testing.T) {
		require.Len(t, b.hooks.calls, 1)
		require.Equal(t, "resumed", b.hooks.calls[0].name)
		require.Equal(t, apps.InstallationActive, b.hooks.calls[0].seen)
	})

	t.Run("resuming an active app changes nothing", func(t *testing.T) {
		_, err := b.svc.ResumeApp(b.robin(t), b.Tracker.ID)
		require.Equal(t, domain.ReasonInvalidStateTransition, errs.ReasonOf(err))
	})

	t.Run("each transition is audited and appended", func(t *testing.T) {
		for action, states := range map[string][2]string{"app.suspend": {"active", "suspended"}, "app.resume": {"suspended", "active"}} {
			entries := b.allows(t, action, b.Tracker.ID)
			require.Len(t, entries, 1, action)
			require.Equal(t, map[string]any{
				"installation_id": b.Tracker.InstallationID.String(),
				"previous_state":  states[0],
				"state":           states[1],
			}, entries[0].Details, action)
		}
		evs := b.installationEvents(t, b.Tracker.InstallationID)
		require.Len(t, evs, 3, "install, suspend, resume")
		require.Equal(t, []any{"active", "suspended", "active"}, []any{evs[0].Payload["state"], evs[1].Payload["state"], evs[2].Payload["state"]})
		for _, ev := range evs {
			require.Equal(t, b.Tracker.PrincipalID, ev.Audience)
		}
	})
}

func TestUninstallApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.NoError(t, b.svc.UninstallApp(b.robin(t), b.Tracker.ID))

	_, ok := b.current(t, b.Tracker.ID)
	require.False(t, ok, "no current installation")
	inst, ok, err := b.Services.AppsStore.Installation(context.Background(), b.Tracker.InstallationID, apps.NoLock)
	require.NoError(t, err)
	require.True(t, ok, "the row stays as history")
	require.Equal(t, apps.InstallationUninstalled, inst.State)
	require.Equal(t, b.Clock.Now(), inst.UninstalledAt)

	t.Run("the app token is revoked", func(t *testing.T) {
		_, err := b.Services.Identity.Authenticate(context.Background(), b.Tracker.Token)
		require.Equal(t, errs.CodeUnauthorized, errs.CodeOf(err))
	})

	t.Run("the grants end", func(t *testing.T) {
		grants, err := b.svc.ListAppGrants(b.robin(t), b.Tracker.ID)
		require.NoError(t, err)
		require.Equal(t, []authz.Grant{}, grants)
	})

	t.Run("the webhook hook ran in the uninstall transaction", func(t *testing.T) {
		require.Len(t, b.hooks.calls, 1)
		require.Equal(t, "uninstalled", b.hooks.calls[0].name)
		require.Equal(t, apps.InstallationUninstalled, b.hooks.calls[0].seen)
	})

	t.Run("the uninstall is audited and appended", func(t *testing.T) {
		entries := b.allows(t, "app.uninstall", b.Tracker.ID)
		require.Len(t, entries, 1)
		require.Equal(t, map[string]any{
			"installation_id": b.Tracker.InstallationID.String(),
			"previous_state":  "active",
			"state":           "uninstalled",
			"grants_revoked":  int64(1),
		}, entries[0].Details)
		evs := b.installationEvents(t, b.Tracker.InstallationID)
		require.Len(t, evs, 2)
		require.Equal(t, "uninstalled", evs[1].Payload["state"])
		require.Equal(t, b.Tracker.PrincipalID, evs[1].Audience)
	})

	t.Run("every change of an uninstalled app is not installed", func(t *testing.T) {
		ctx := b.robin(t)
		require.Equal(t, domain.ReasonAppNotInstalled, errs.ReasonOf(b.svc.UninstallApp(ctx, b.Tracker.ID)))
		_, err := b.svc.SuspendApp(ctx, b.Tracker.ID)
		require.Equal(t, domain.ReasonAppNotInstalled, errs.ReasonOf(err))
		_, err = b.svc.ResumeApp(ctx, b.Tracker.ID)
		require.Equal(t, domain.ReasonAppNotInstalled, errs.ReasonOf(err))
		_, err = b.svc.SetAppScopes(ctx, appScopes(b, nil))
		require.Equal(t, domain.ReasonAppNotInstalled, errs.ReasonOf(err))
		_, err = b.svc.CreateAppGrant(ctx, grantOn(b, b.Support, authz.LevelRead))
		require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
		require.Equal(t, domain.ReasonAppNotInstalled, errs.ReasonOf(err))
	})
}

func TestUninstallSuspendedApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.svc.SuspendApp(b.robin(t), b.Tracker.ID)
	require.NoError(t, err)
	require.NoError(t, b.svc.UninstallApp(b.robin(t), b.Tracker.ID))
	entries := b.allows(t, "app.uninstall", b.Tracker.ID)
	require.Len(t, entries, 1)
	require.Equal(t, "suspended", entries[0].Details["previous_state"])
}
