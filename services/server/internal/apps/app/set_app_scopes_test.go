package app_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	chatapp "bothy/server/internal/chat/app"
	"bothy/server/internal/kernel/errs"
	"bothy/server/test/harness"
)

// appScopes is the setAppScopes input for Tracker.
func appScopes(b *testBundle, scopes []string) app.SetAppScopes {
	return app.SetAppScopes{AppID: b.Tracker.ID, Scopes: scopes}
}

func TestSetAppScopes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inst, err := b.svc.SetAppScopes(b.robin(t), appScopes(b, []string{"messages:write", "events:subscribe"}))
	require.NoError(t, err)
	require.Equal(t, []string{"events:subscribe", "messages:write"}, inst.GrantedScopes)
	require.Equal(t, []string{}, inst.EventSubscriptions, "message.created needs messages:read: narrowed away")
	require.Equal(t, b.Clock.Now(), inst.UpdatedAt)
	stored, ok := b.current(t, b.Tracker.ID)
	require.True(t, ok)
	require.Equal(t, inst, stored)

	t.Run("a removed scope takes effect at the next request", func(t *testing.T) {
		ctx := b.As(t, b.Tracker.Token)
		_, err := b.Services.Chat.ListMessages(ctx, chatapp.ListMessages{ChannelID: b.Eskalation})
		require.Equal(t, errs.CodeForbidden, errs.CodeOf(err))
		require.Equal(t, "scope_missing", errs.ReasonOf(err))
		_, err = b.Services.Chat.PostMessage(ctx, chatapp.PostMessage{ChannelID: b.Eskalation, Text: "still allowed"})
		require.NoError(t, err, "messages:write stays")
	})

	t.Run("the change is audited and appended", func(t *testing.T) {
		entries := b.allows(t, "app.set_scopes", b.Tracker.ID)
		require.Len(t, entries, 1)
		require.Equal(t, map[string]any{
			"installation_id":     b.Tracker.InstallationID.String(),
			"previous_scopes":     []any{"events:subscribe", "messages:read", "messages:write"},
			"granted_scopes":      []any{"events:subscribe", "messages:write"},
			"event_subscriptions": []any{},
		}, entries[0].Details)
		evs := b.installationEvents(t, b.Tracker.InstallationID)
		require.Len(t, evs, 2)
		require.Equal(t, []any{"events:subscribe", "messages:write"}, evs[1].Payload["granted_scopes"])
		require.Equal(t, []any{}, evs[1].Payload["event_subscriptions"])
	})

	t.Run("granting the scope again does not bring the event back", func(t *testing.T) {
		inst, err := b.svc.SetAppScopes(b.robin(t), appScopes(b, harness.TrackerScopes))
		require.NoError(t, err)
		require.Equal(t, harness.TrackerScopes, inst.GrantedScopes)
		require.Equal(t, []string{}, inst.EventSubscriptions)
	})

	t.Run("a request that changes nothing writes nothing", func(t *testing.T) {
		before := len(b.allows(t, "app.set_scopes", b.Tracker.ID))
		inst, err := b.svc.SetAppScopes(b.robin(t), appScopes(b, []string{"messages:write", "events:subscribe", "messages:read"}))
		require.NoError(t, err)
		require.Equal(t, harness.TrackerScopes, inst.GrantedScopes)
		require.Len(t, b.allows(t, "app.set_scopes", b.Tracker.ID), before)
		require.Len(t, b.installationEvents(t, b.Tracker.InstallationID), 3)
	})

	t.Run("a scope outside the manifest is refused", func(t *testing.T) {
		_, err := b.svc.SetAppScopes(b.robin(t), appScopes(b, []string{"channels:read"}))
		requireField(t, err, errs.CodeValidationFailed, "/scopes/0", "not_in_manifest")
		inst, _ := b.current(t, b.Tracker.ID)
		require.Equal(t, harness.TrackerScopes, inst.GrantedScopes)
	})
}

func TestSetAppScopesOfASuspendedApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.svc.SuspendApp(b.robin(t), b.Tracker.ID)
	require.NoError(t, err)
	inst, err := b.svc.SetAppScopes(b.robin(t), appScopes(b, nil))
	require.NoError(t, err)
	require.Equal(t, []string{}, inst.GrantedScopes, "no scopes revokes every scope")
	require.Equal(t, "suspended", string(inst.State), "scopes do not change the state")
	require.False(t, domain.ValidScope("none"), "none marks scope-free actions and is not grantable")
}
