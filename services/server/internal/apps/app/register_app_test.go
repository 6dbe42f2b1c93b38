package app_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/test/harness"
)

func TestRegisterApp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := b.robin(t)
	m := harness.TrackerManifest()
	m.Name = "  Ticket Bridge  "
	m.Delivery.InteractionsURL = "https://hooks.example.com/bothy/interactions?token=abc"

	a, err := b.svc.RegisterApp(ctx, app.RegisterApp{Manifest: m})
	require.NoError(t, err)
	require.Equal(t, "Ticket Bridge", a.Name, "the name loses its surrounding space")
	require.Equal(t, m, a.Manifest, "the manifest is kept as registered")
	require.Equal(t, b.Robin.ID, a.CreatedBy)
	require.Equal(t, b.Clock.Now(), a.CreatedAt)

	got, err := b.svc.GetApp(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, a, got)

	var kind, name string
	require.NoError(t, b.Services.DB.App.QueryRow(context.Background(),
		`SELECT kind, display_name FROM principals WHERE id = $1`, a.PrincipalID).Scan(&kind, &name))
	require.Equal(t, "app", kind)
	require.Equal(t, "Ticket Bridge", name)

	entries := b.allows(t, "app.register", a.ID)
	require.Len(t, entries, 1)
	require.Equal(t, b.Robin.ID, entries[0].ActorID)
	require.Equal(t, map[string]any{
		"principal_id":      a.PrincipalID.String(),
		"scopes":            []any{"events:subscribe", "messages:read", "messages:write"},
		"events":            []any{"message.created"},
		"delivery_mode":     "webhook",
		"events_host":       "hooks.example.com",
		"interactions_host": "hooks.example.com",
	}, entries[0].Details)
	require.NotContains(t, fmt.Sprint(entries[0].Details), "/bothy", "never a path or query")

	_, ok := b.current(t, a.ID)
	require.False(t, ok, "registering does not install")
}

func TestRegisterAppRefusesAnInvalidManifest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := b.robin(t)
	cases := []struct {
		name    string
		change  func(m *domain.Manifest)
		code    errs.Code
		pointer string
	}{
		{"a host outside webhook.allowed_hosts", func(m *domain.Manifest) { m.Delivery.EventsURL = "https://other.example.com/e" },
			errs.CodeWebhookHostNotAllowed, "/manifest/delivery/events_url"},
		{"a listed host on an unlisted port", func(m *domain.Manifest) { m.Delivery.EventsURL = "https://hooks.example.com:8443/e" },
			errs.CodeWebhookHostNotAllowed, "/manifest/delivery/events_url"},
		{"an event without the scope of its receive action", func(m *domain.Manifest) { m.Scopes = []string{"events:subscribe"} },
			errs.CodeValidationFailed, "/manifest/events/0"},
		{"a name with a control character", func(m *domain.Manifest) { m.Name = "Track\ter" },
			errs.CodeValidationFailed, "/manifest/name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := harness.TrackerManifest()
			tc.change(&m)
			_, err := b.svc.RegisterApp(ctx, app.RegisterApp{Manifest: m})
			e, ok := errs.As(err)
			require.True(t, ok)
			require.Equal(t, tc.code, e.Code)
			require.Len(t, e.Fields, 1)
			require.Equal(t, tc.pointer, e.Fields[0].Pointer)
		})
	}
	var apps, principals int
	require.NoError(t, b.Services.DB.App.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM apps), (SELECT count(*) FROM principals WHERE kind = 'app')`).Scan(&apps, &principals))
	require.Equal(t, 1, apps, "only Tracker")
	require.Equal(t, 1, principals, "a refused registration leaves no principal behind")
	require.Len(t, b.allows(t, "app.register", ids.Zero), 1, "only the registration of Tracker is audited")
}

func TestListAndGetApps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := b.robin(t)
	helper := b.helper(t)
	list, err := b.svc.ListApps(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, []string{"Helper", "Tracker"}, []string{list[0].Name, list[1].Name}, "ordered by name")
	require.Equal(t, helper, list[0])

	_, err = b.svc.GetApp(ctx, ids.New())
	require.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
}

func TestListAppsOfAnEmptyInstanceIsEmptyNotNil(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := b.robin(t)
	require.NoError(t, b.svc.UninstallApp(ctx, b.Tracker.ID))
	_, err := b.Services.DB.Owner.Exec(context.Background(), `DELETE FROM apps`)
	require.NoError(t, err)
	list, err := b.svc.ListApps(ctx)
	require.NoError(t, err)
	require.NotNil(t, list)
	require.Empty(t, list)
}
