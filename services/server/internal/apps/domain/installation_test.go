package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/errs"
)

func TestInstallationTransitions(t *testing.T) {
	t.Parallel()
	const (
		active      = apps.InstallationActive
		suspended   = apps.InstallationSuspended
		uninstalled = apps.InstallationUninstalled
	)
	cases := []struct {
		name   string
		from   apps.InstallationState
		ev     domain.InstallationEvent
		to     apps.InstallationState
		reason string // "" means allowed
	}{
		{"suspend from active suspends", active, domain.InstallationSuspend, suspended, ""},
		{"resume from suspended activates", suspended, domain.InstallationResume, active, ""},
		{"uninstall from active uninstalls", active, domain.InstallationUninstall, uninstalled, ""},
		{"uninstall from suspended uninstalls", suspended, domain.InstallationUninstall, uninstalled, ""},
		{"suspend from suspended changes nothing", suspended, domain.InstallationSuspend, suspended, domain.ReasonInvalidStateTransition},
		{"resume from active changes nothing", active, domain.InstallationResume, active, domain.ReasonInvalidStateTransition},
		{"suspend of an uninstalled app is not installed", uninstalled, domain.InstallationSuspend, uninstalled, domain.ReasonAppNotInstalled},
		{"resume of an uninstalled app is not installed", uninstalled, domain.InstallationResume, uninstalled, domain.ReasonAppNotInstalled},
		{"uninstall of an uninstalled app is not installed", uninstalled, domain.InstallationUninstall, uninstalled, domain.ReasonAppNotInstalled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NextInstallationState(tc.from, tc.ev)
			require.Equal(t, tc.to, got)
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			require.Equal(t, errs.CodeConflict, errs.CodeOf(err))
			require.Equal(t, tc.reason, errs.ReasonOf(err))
		})
	}
}

func TestInstallationTransitionsRejectUnknownValues(t *testing.T) {
	t.Parallel()
	_, err := domain.NextInstallationState("archived", domain.InstallationSuspend)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
	_, err = domain.NextInstallationState(apps.InstallationActive, "delete")
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
}

func TestPlanInstallation(t *testing.T) {
	t.Parallel()
	wide := domain.Manifest{
		Name:   "Tracker",
		Scopes: []string{"messages:write", "events:subscribe", "messages:read", "channels:read"},
		Events: []string{"message.created", "channel.created", "instance.updated"},
		Delivery: domain.Delivery{
			Mode:      domain.DeliveryWebhook,
			EventsURL: "https://hooks.example.com/bothy/events",
		},
	}
	cases := []struct {
		name          string
		scopes        []string
		events        []string
		granted, subs []string
		fields        []field
	}{
		{
			name:    "no scopes given grants the manifest's scopes in catalogue order and every event they allow",
			granted: []string{"events:subscribe", "messages:read", "messages:write", "channels:read"},
			subs:    []string{"message.created", "channel.created", "instance.updated"},
		},
		{
			name:    "a subset of scopes limits the events to what it allows",
			scopes:  []string{"messages:read", "events:subscribe"},
			granted: []string{"events:subscribe", "messages:read"},
			subs:    []string{"message.created", "instance.updated"},
		},
		{
			name:    "without events:subscribe no event is allowed",
			scopes:  []string{"messages:read", "messages:write"},
			granted: []string{"messages:read", "messages:write"},
			subs:    []string{},
		},
		{
			name:    "an empty scope list grants nothing",
			scopes:  []string{},
			granted: []string{},
			subs:    []string{},
		},
		{
			name:    "requested events are kept in manifest order",
			events:  []string{"instance.updated", "message.created"},
			granted: []string{"events:subscribe", "messages:read", "messages:write", "channels:read"},
			subs:    []string{"message.created", "instance.updated"},
		},
		{
			name:    "an empty event list subscribes to nothing",
			events:  []string{},
			granted: []string{"events:subscribe", "messages:read", "messages:write", "channels:read"},
			subs:    []string{},
		},
		{
			name:   "an unknown scope, a duplicate and an event the scopes do not allow are all listed",
			scopes: []string{"events:subscribe", "root", "events:subscribe"},
			events: []string{"message.created", "instance.updated", "thread.created", "instance.updated"},
			fields: []field{
				{"/scopes/1", "unknown_scope"},
				{"/scopes/2", "duplicate"},
				{"/event_subscriptions/0", "scope_missing"},
				{"/event_subscriptions/2", "not_in_manifest"},
				{"/event_subscriptions/3", "duplicate"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			granted, subs, err := domain.PlanInstallation(wide, tc.scopes, tc.events)
			if tc.fields == nil {
				require.NoError(t, err)
				require.Equal(t, tc.granted, granted)
				require.Equal(t, tc.subs, subs)
				return
			}
			requireFields(t, err, tc.fields)
		})
	}

	t.Run("a scope outside a narrow manifest is not in the manifest", func(t *testing.T) {
		t.Parallel()
		narrow := tracker()
		_, _, err := domain.PlanInstallation(narrow, []string{"events:subscribe", "channels:read"}, nil)
		requireFields(t, err, []field{{"/scopes/1", "not_in_manifest"}})
	})
}

func TestPlanScopes(t *testing.T) {
	t.Parallel()
	m := tracker()
	current := []string{"message.created"}
	granted, subs, err := domain.PlanScopes(m, current, []string{"messages:write", "events:subscribe"})
	require.NoError(t, err)
	require.Equal(t, []string{"events:subscribe", "messages:write"}, granted)
	require.Equal(t, []string{}, subs, "message.created needs messages:read: narrowed away")

	granted, subs, err = domain.PlanScopes(m, []string{}, m.Scopes)
	require.NoError(t, err)
	require.Equal(t, m.Scopes, granted)
	require.Equal(t, []string{}, subs, "scopes never widen the event subscriptions")

	granted, subs, err = domain.PlanScopes(m, current, nil)
	require.NoError(t, err)
	require.Equal(t, []string{}, granted, "no scopes revokes every scope")
	require.Equal(t, []string{}, subs)

	_, _, err = domain.PlanScopes(m, current, []string{"channels:read", "spaces:admin", "channels:read"})
	requireFields(t, err, []field{{"/scopes/0", "not_in_manifest"}, {"/scopes/1", "unknown_scope"}, {"/scopes/2", "duplicate"}})
}

func requireFields(t *testing.T, err error, want []field) {
	t.Helper()
	requireCodeFields(t, err, errs.CodeValidationFailed, want)
}

// requireCodeFields asserts that err is a *errs.Error of code with exactly
// the fields want, in order.
func requireCodeFields(t *testing.T, err error, code errs.Code, want []field) {
	t.Helper()
	e, ok := errs.As(err)
	require.True(t, ok, "a *errs.Error")
	require.Equal(t, code, e.Code)
	got := make([]field, 0, len(e.Fields))
	for _, f := range e.Fields {
		got = append(got, field{f.Pointer, f.Code})
	}
	require.Equal(t, want, got)
}
