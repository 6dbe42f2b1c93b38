package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/test/harness"
)

func TestInstallApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	helper := b.helper(t)
	ctx, marked := idempotency.Watch(b.robin(t))

	out, err := b.svc.InstallApp(ctx, app.InstallApp{AppID: helper.ID, Scopes: []string{"messages:read", "events:subscribe"}})
	require.NoError(t, err)
	require.True(t, marked(), "the app token is a one-time secret")
	inst := out.Installation
	require.Equal(t, helper.ID, inst.AppID)
	require.Equal(t, helper.PrincipalID, inst.PrincipalID)
	require.Equal(t, apps.InstallationActive, inst.State)
	require.Equal(t, []string{"events:subscribe", "messages:read"}, inst.GrantedScopes, "catalogue order")
	require.Equal(t, []string{"message.created", "app.installation.updated"}, inst.EventSubscriptions,
		"the manifest's events the scopes allow; channel.created needs channels:read")
	require.Equal(t, b.Robin.ID, inst.InstalledBy)
	stored, ok := b.current(t, helper.ID)
	require.True(t, ok)
	require.Equal(t, inst, stored)

	t.Run("the app token authenticates as the app with the installation's facts", func(t *testing.T) {
		p := b.Authenticate(t, out.AppToken)
		require.Equal(t, actor.KindApp, p.Kind)
		require.Equal(t, helper.PrincipalID, p.ID)
		require.Equal(t, inst.ID, p.InstallationID)
		require.True(t, p.InstallationActive)
		require.Equal(t, inst.GrantedScopes, p.GrantedScopes)
	})

	t.Run("the app token is stored only as a hash", func(t *testing.T) {
		httpservertest.RequireSecretAbsent(t, b.Services.DB.App, out.AppToken,
			"app_tokens", "apps", "app_installations", "audit_events", "event_log", "principals", "idempotency_keys")
	})

	t.Run("the install is audited", func(t *testing.T) {
		entries := b.allows(t, "app.install", helper.ID)
		require.Len(t, entries, 1)
		require.Equal(t, map[string]any{
			"installation_id":     inst.ID.String(),
			"granted_scopes":      []any{"events:subscribe", "messages:read"},
			"event_subscriptions": []any{"message.created", "app.installation.updated"},
		}, entries[0].Details)
	})

	t.Run("app.installation.updated goes to the app principal", func(t *testing.T) {
		evs := b.installationEvents(t, inst.ID)
		require.Len(t, evs, 1)
		require.Equal(t, helper.PrincipalID, evs[0].Audience)
		require.Equal(t, b.Robin.ID, evs[0].Actor)
		require.Equal(t, string(authorize.ReceiveSelf), evs[0].ReceiveAction)
		require.Equal(t, map[string]any{
			"installation_id":     inst.ID.String(),
			"app_id":              helper.ID.String(),
			"state":               "active",
			"granted_scopes":      []any{"events:subscribe", "messages:read"},
			"event_subscriptions": []any{"message.created", "app.installation.updated"},
		}, evs[0].Payload)
	})

	t.Run("the webhook hook ran in the install transaction", func(t *testing.T) {
		require.Len(t, b.hooks.calls, 1)
		c := b.hooks.calls[0]
		require.Equal(t, "installed", c.name)
		require.Equal(t, inst, c.inst)
		require.Equal(t, apps.InstallationActive, c.seen, "the hook sees the new row")
		require.Equal(t, b.Robin.ID, c.actor.ID, "the hook acts for the installing owner")
		require.Equal(t, domain.DeliveryNone, c.mode)
	})

	t.Run("a second install is already installed", func(t *testing.T) {
		_, err := b.svc.InstallApp(b.robin(t), app.InstallApp{AppID: helper.ID})
		require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
		require.Equal(t, domain.ReasonAlreadyInstalled, errs.ReasonOf(err))
		_, err = b.svc.SuspendApp(b.robin(t), helper.ID)
		require.NoError(t, err)
		_, err = b.svc.InstallApp(b.robin(t), app.InstallApp{AppID: helper.ID})
		require.Equal(t, domain.ReasonAlreadyInstalled, errs.ReasonOf(err), "a suspended app is installed too")
	})

	t.Run("after an uninstall the app installs again with a new installation and token", func(t *testing.T) {
		require.NoError(t, b.svc.UninstallApp(b.robin(t), helper.ID))
		again, err := b.svc.InstallApp(b.robin(t), app.InstallApp{AppID: helper.ID, Scopes: []string{}})
		require.NoError(t, err)
		require.NotEqual(t, inst.ID, again.Installation.ID)
		require.NotEqual(t, out.AppToken, again.AppToken)
		require.Equal(t, []string{}, again.Installation.GrantedScopes)
		require.Equal(t, []string{}, again.Installation.EventSubscriptions)
		_, err = b.Services.Identity.Authenticate(context.Background(), out.AppToken)
		require.Equal(t, errs.CodeUnauthorized, errs.CodeOf(err), "the old token stays revoked")
	})
}

func TestInstallAppWithoutScopesGrantsTheManifest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	helper := b.helper(t)
	out, err := b.svc.InstallApp(b.robin(t), app.InstallApp{AppID: helper.ID})
	require.NoError(t, err)
	require.Equal(t, []string{"events:subscribe", "messages:read", "messages:write", "channels:read"}, out.Installation.GrantedScopes)
	require.Equal(t, helper.Manifest.Events, out.Installation.EventSubscriptions)
}

func TestInstallAppRefusesWhatTheManifestDoesNotAllow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	register := func(m domain.Manifest) domain.App {
		a, err := b.svc.RegisterApp(b.robin(t), app.RegisterApp{Manifest: m})
		require.NoError(t, err)
		return a
	}
	narrow := harness.TrackerManifest()
	narrow.Name = "Narrow"
	a := register(narrow)

	_, err := b.svc.InstallApp(b.robin(t), app.InstallApp{AppID: a.ID, Scopes: []string{"events:subscribe", "channels:read"}})
	requireField(t, err, errs.CodeValidationFailed, "/scopes/1", "not_in_manifest")
	_, err = b.svc.InstallApp(b.robin(t), app.InstallApp{AppID: a.ID, Scopes: []string{"events:subscribe"}, EventSubscriptions: []string{"message.created"}})
	requireField(t, err, errs.CodeValidationFailed, "/event_subscriptions/0", "scope_missing")
	_, ok := b.current(t, a.ID)
	require.False(t, ok, "nothing was installed")
	require.Empty(t, b.hooks.calls)

	t.Run("a host removed from webhook.allowed_hosts since registration is refused at install", func(t *testing.T) {
		other, err := hostlist.Parse([]string{"other.example.com"})
		require.NoError(t, err)
		s := b.Services
		svc, err := app.New(app.Deps{UnitOfWork: s.UnitOfWork, Authorizer: s.Authorizer, Audit: s.Audit, Events: s.Events,
			Principals: s.Identity, Grants: s.Grants, Store: s.AppsStore, Clock: s.Clock}, app.Options{AllowedHosts: other})
		require.NoError(t, err)
		_, err = svc.InstallApp(b.robin(t), app.InstallApp{AppID: a.ID})
		requireField(t, err, errs.CodeWebhookHostNotAllowed, "/manifest/delivery/events_url", "webhook_host_not_allowed")
	})
}

func TestInstallRollsBackWhenTheHookFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	helper := b.helper(t)
	boom := errs.Internalf("webhook work failed")
	b.hooks.fail = boom
	_, err := b.svc.InstallApp(b.robin(t), app.InstallApp{AppID: helper.ID})
	require.ErrorIs(t, err, boom)
	_, ok := b.current(t, helper.ID)
	require.False(t, ok, "the installation rolled back with the hook")
	require.Empty(t, b.allows(t, "app.install", helper.ID))
	var tokens int
	require.NoError(t, b.Services.DB.App.QueryRow(context.Background(),
		`SELECT count(*) FROM app_tokens WHERE principal_id = $1`, helper.PrincipalID).Scan(&tokens))
	require.Zero(t, tokens, "the app token rolled back too")
}

// requireField asserts that err is code with exactly one field error at
// pointer with item.
func requireField(t *testing.T, err error, code errs.Code, pointer, item string) {
	t.Helper()
	e, ok := errs.As(err)
	require.True(t, ok, "a *errs.Error: %v", err)
	require.Equal(t, code, e.Code)
	require.Equal(t, []errs.FieldError{{Pointer: pointer, Code: item}}, stripDetails(e.Fields))
}

func stripDetails(fields []errs.FieldError) []errs.FieldError {
	out := make([]errs.FieldError, 0, len(fields))
	for _, f := range fields {
		out = append(out, errs.FieldError{Pointer: f.Pointer, Code: f.Code})
	}
	return out
}

// TestConcurrentInstallsInstallOnce: two owners' requests racing for the
// same app give one installation; the other answers already_installed.
func TestConcurrentInstallsInstallOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	helper := b.helper(t)
	ctx := b.robin(t)
	results := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := b.svc.InstallApp(ctx, app.InstallApp{AppID: helper.ID})
			results <- err
		}()
	}
	var ok, conflicts int
	for range 2 {
		switch err := <-results; {
		case err == nil:
			ok++
		case errs.ReasonOf(err) == domain.ReasonAlreadyInstalled:
			conflicts++
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	require.Equal(t, 1, ok)
	require.Equal(t, 1, conflicts)
	require.Len(t, b.allows(t, "app.install", helper.ID), 1)
}
