package domain_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/hostlist"
)

// field is a field error reduced to its pointer and item code.
type field struct{ pointer, code string }

// tracker is the manifest of the app Tracker of the test world.
func tracker() domain.Manifest {
	return domain.Manifest{
		Name:        "Tracker",
		Description: "Turns escalations into tickets.",
		Scopes:      []string{"events:subscribe", "messages:read", "messages:write"},
		Events:      []string{"message.created"},
		Delivery: domain.Delivery{
			Mode:      domain.DeliveryWebhook,
			EventsURL: "https://hooks.example.com/bothy/events",
		},
	}
}

func allowedHosts(t testing.TB) hostlist.List {
	t.Helper()
	l, err := hostlist.Parse([]string{"hooks.example.com", "alt.example.com:8443"})
	require.NoError(t, err)
	return l
}

func TestValidateManifest_Rules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(m *domain.Manifest)
		code   errs.Code // "" means valid
		fields []field
	}{
		{name: "the manifest of Tracker is valid", change: func(*domain.Manifest) {}},
		{name: "a manifest without delivery, scopes or events is valid", change: func(m *domain.Manifest) {
			m.Scopes, m.Events, m.Delivery = nil, nil, domain.Delivery{Mode: domain.DeliveryNone}
		}},
		{name: "events_url on a listed host and its listed port is valid", change: func(m *domain.Manifest) {
			m.Delivery.EventsURL = "https://alt.example.com:8443/events"
		}},
		{name: "an explicit :443 on a host listed without port is valid", change: func(m *domain.Manifest) {
			m.Delivery.EventsURL = "https://HOOKS.example.com.:443/events"
		}},
		{name: "interactions_url on a listed host is valid", change: func(m *domain.Manifest) {
			m.Delivery.InteractionsURL = "https://hooks.example.com/bothy/interactions"
		}},
		{name: "interactions_url without event delivery is valid", change: func(m *domain.Manifest) {
			m.Delivery = domain.Delivery{Mode: domain.DeliveryNone, InteractionsURL: "https://hooks.example.com/i"}
		}},
		{name: "every subscribable event with the scopes it needs is valid", change: func(m *domain.Manifest) {
			m.Scopes = []string{"channels:read", "messages:read", "events:subscribe"}
			m.Events = domain.SubscribableEventTypes()
		}},
		{name: "a scope-free event needs only events:subscribe", change: func(m *domain.Manifest) {
			m.Scopes = []string{"events:subscribe"}
			m.Events = []string{"instance.updated", "app.installation.updated"}
		}},
		{
			name:   "an empty name is required",
			change: func(m *domain.Manifest) { m.Name = "" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/name", "required"}},
		},
		{
			name:   "a blank name is required",
			change: func(m *domain.Manifest) { m.Name = " \t " },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/name", "required"}},
		},
		{
			name:   "a name with a control character has invalid characters",
			change: func(m *domain.Manifest) { m.Name = "Track\ner" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/name", "invalid_characters"}},
		},
		{
			name:   "a name that is not UTF-8 has invalid characters",
			change: func(m *domain.Manifest) { m.Name = "Tracker\xff" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/name", "invalid_characters"}},
		},
		{
			name:   "surrounding space does not count towards the length",
			change: func(m *domain.Manifest) { m.Name = "  " + strings.Repeat("a", domain.MaxAppNameLength) + "  " },
		},
		{
			name:   "a name longer than a principal's display name is too long",
			change: func(m *domain.Manifest) { m.Name = strings.Repeat("é", domain.MaxAppNameLength+1) },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/name", "max_length"}},
		},
		{
			name:   "an unknown scope is named by its index",
			change: func(m *domain.Manifest) { m.Scopes = []string{"events:subscribe", "spaces:admin", "messages:read"} },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/scopes/1", "unknown_scope"}},
		},
		{
			name:   "a repeated scope is a duplicate",
			change: func(m *domain.Manifest) { m.Scopes = append(m.Scopes, "messages:read") },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/scopes/3", "duplicate"}},
		},
		{
			name:   "an agent-only event is not subscribable",
			change: func(m *domain.Manifest) { m.Events = []string{"agent.invocation.requested"} },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/events/0", "not_subscribable"}},
		},
		{
			name:   "an unknown event is not subscribable",
			change: func(m *domain.Manifest) { m.Events = []string{"message.created", "message.exploded"} },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/events/1", "not_subscribable"}},
		},
		{
			name:   "a repeated event is a duplicate",
			change: func(m *domain.Manifest) { m.Events = []string{"message.created", "message.created"} },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/events/1", "duplicate"}},
		},
		{
			name:   "an event without events:subscribe misses a scope",
			change: func(m *domain.Manifest) { m.Scopes = []string{"messages:read"} },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/events/0", "scope_missing"}},
		},
		{
			name:   "message.created without messages:read misses a scope",
			change: func(m *domain.Manifest) { m.Scopes = []string{"events:subscribe", "messages:write"} },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/events/0", "scope_missing"}},
		},
		{
			name: "channel.created without channels:read misses a scope",
			change: func(m *domain.Manifest) {
				m.Events = []string{"message.created", "channel.created"}
			},
			code: errs.CodeValidationFailed, fields: []field{{"/manifest/events/1", "scope_missing"}},
		},
		{
			name:   "an unknown delivery mode is not in the enum",
			change: func(m *domain.Manifest) { m.Delivery.Mode = "email" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/delivery/mode", "enum"}},
		},
		{
			name:   "webhook delivery requires events_url",
			change: func(m *domain.Manifest) { m.Delivery.EventsURL = "" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/delivery/events_url", "required"}},
		},
		{
			name:   "events_url without webhook delivery is not allowed",
			change: func(m *domain.Manifest) { m.Delivery.Mode = domain.DeliveryNone },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/delivery/events_url", "not_allowed"}},
		},
		{
			name:   "an http events_url needs https",
			change: func(m *domain.Manifest) { m.Delivery.EventsURL = "http://hooks.example.com/bothy/events" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/delivery/events_url", "https_required"}},
		},
		{
			name:   "events_url with user info is not allowed",
			change: func(m *domain.Manifest) { m.Delivery.EventsURL = "https://alex@hooks.example.com/e" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/delivery/events_url", "userinfo_not_allowed"}},
		},
		{
			name:   "events_url with a fragment is not allowed",
			change: func(m *domain.Manifest) { m.Delivery.EventsURL = "https://hooks.example.com/e#top" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/delivery/events_url", "fragment_not_allowed"}},
		},
		{
			name:   "an unparsable events_url is invalid",
			change: func(m *domain.Manifest) { m.Delivery.EventsURL = "https://hooks.example.com/a b" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/delivery/events_url", "invalid_url"}},
		},
		{
			name:   "events_url on an unlisted host gives webhook_host_not_allowed",
			change: func(m *domain.Manifest) { m.Delivery.EventsURL = "https://other.example.com/events" },
			code:   errs.CodeWebhookHostNotAllowed, fields: []field{{"/manifest/delivery/events_url", "webhook_host_not_allowed"}},
		},
		{
			name:   "events_url on a listed host with an unlisted port gives webhook_host_not_allowed",
			change: func(m *domain.Manifest) { m.Delivery.EventsURL = "https://hooks.example.com:8443/events" },
			code:   errs.CodeWebhookHostNotAllowed, fields: []field{{"/manifest/delivery/events_url", "webhook_host_not_allowed"}},
		},
		{
			name:   "interactions_url on an unlisted host gives webhook_host_not_allowed",
			change: func(m *domain.Manifest) { m.Delivery.InteractionsURL = "https://127.0.0.1/interactions" },
			code:   errs.CodeWebhookHostNotAllowed, fields: []field{{"/manifest/delivery/interactions_url", "webhook_host_not_allowed"}},
		},
		{
			name:   "an http interactions_url needs https",
			change: func(m *domain.Manifest) { m.Delivery.InteractionsURL = "http://hooks.example.com/i" },
			code:   errs.CodeValidationFailed, fields: []field{{"/manifest/delivery/interactions_url", "https_required"}},
		},
		{
			name: "an unlisted host next to another defect is a validation failure listing both",
			change: func(m *domain.Manifest) {
				m.Name = ""
				m.Delivery.EventsURL = "https://other.example.com/events"
			},
			code: errs.CodeValidationFailed, fields: []field{
				{"/manifest/name", "required"},
				{"/manifest/delivery/events_url", "webhook_host_not_allowed"},
			},
		},
		{
			name: "every defect is listed in document order",
			change: func(m *domain.Manifest) {
				m.Name = ""
				m.Scopes = []string{"messages:read", "root"}
				m.Events = []string{"message.created", "agent.invocation.requested"}
				m.Delivery = domain.Delivery{Mode: domain.DeliveryWebhook, InteractionsURL: "ftp://hooks.example.com/i"}
			},
			code: errs.CodeValidationFailed, fields: []field{
				{"/manifest/name", "required"},
				{"/manifest/scopes/1", "unknown_scope"},
				{"/manifest/events/0", "scope_missing"},
				{"/manifest/events/1", "not_subscribable"},
				{"/manifest/delivery/events_url", "required"},
				{"/manifest/delivery/interactions_url", "https_required"},
			},
		},
	}
	hosts := allowedHosts(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := tracker()
			tc.change(&m)
			err := domain.ValidateManifest(m, hosts)
			if tc.code == "" {
				require.NoError(t, err)
				return
			}
			requireCodeFields(t, err, tc.code, tc.fields)
			require.NotContains(t, fmt.Sprint(err, err.(*errs.Error).Fields), "example.com",
				"neither the error text nor a detail repeats the address")
		})
	}
}

func TestValidateManifestWithAnEmptyHostListAllowsNoWebhook(t *testing.T) {
	t.Parallel()
	err := domain.ValidateManifest(tracker(), nil)
	require.Equal(t, errs.CodeWebhookHostNotAllowed, errs.CodeOf(err))
}

func TestEventScopes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		event  string
		scopes []string
		ok     bool
	}{
		{"message.created", []string{"events:subscribe", "messages:read"}, true},
		{"message.updated", []string{"events:subscribe", "messages:read"}, true},
		{"message.deleted", []string{"events:subscribe", "messages:read"}, true},
		{"thread.created", []string{"events:subscribe", "messages:read"}, true},
		{"channel.created", []string{"events:subscribe", "channels:read"}, true},
		{"channel.updated", []string{"events:subscribe", "channels:read"}, true},
		{"instance.updated", []string{"events:subscribe"}, true},
		{"app.installation.updated", []string{"events:subscribe"}, true},
		{"agent.invocation.requested", nil, false},
		{"message.exploded", nil, false},
	} {
		got, ok := domain.EventScopes(tc.event)
		require.Equal(t, tc.ok, ok, tc.event)
		require.Equal(t, tc.scopes, got, tc.event)
	}
	for _, typ := range domain.SubscribableEventTypes() {
		_, ok := domain.EventScopes(typ)
		require.True(t, ok, "every subscribable type has its scopes: %s", typ)
	}
}

func TestAllowedEvents(t *testing.T) {
	t.Parallel()
	events := []string{"message.created", "channel.created", "instance.updated"}
	require.Equal(t, []string{}, domain.AllowedEvents(events, nil))
	require.Equal(t, []string{}, domain.AllowedEvents(events, []string{"messages:read", "channels:read"}),
		"without events:subscribe nothing is allowed")
	require.Equal(t, []string{"instance.updated"}, domain.AllowedEvents(events, []string{"events:subscribe"}))
	require.Equal(t, []string{"message.created", "instance.updated"},
		domain.AllowedEvents(events, []string{"messages:read", "events:subscribe"}), "manifest order is kept")
	require.Equal(t, events, domain.AllowedEvents(events, domain.AppScopes()))
}

func TestAppScopes(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"events:subscribe", "messages:read", "messages:write", "channels:read"}, domain.AppScopes())
	for _, s := range domain.AppScopes() {
		require.True(t, domain.ValidScope(s))
	}
	require.False(t, domain.ValidScope("none"), "the marker of scope-free actions is not grantable")
	require.False(t, domain.ValidScope("Messages:Read"))
}

func TestManifestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, m := range []domain.Manifest{
		tracker(),
		{Name: "Robin's bot", Scopes: []string{}, Events: []string{}, Delivery: domain.Delivery{Mode: domain.DeliveryNone}},
	} {
		raw, err := domain.EncodeManifest(m)
		require.NoError(t, err)
		var tree any
		require.NoError(t, json.Unmarshal(raw, &tree))
		require.False(t, holdsNull(tree), "no JSON null (ADR 0053)")
		got, err := domain.DecodeManifest(raw)
		require.NoError(t, err)
		require.Equal(t, m, got)
	}
	got, err := domain.DecodeManifest([]byte(`{"name":"Tracker"}`))
	require.NoError(t, err)
	require.Equal(t, domain.Manifest{Name: "Tracker", Scopes: []string{}, Events: []string{}, Delivery: domain.Delivery{Mode: domain.DeliveryNone}}, got,
		"absent lists decode empty and absent delivery as none")
	_, err = domain.DecodeManifest([]byte(`[]`))
	require.Error(t, err)
}

// FuzzDecodeManifest: a stored manifest that decodes encodes to a form that
// decodes to the same manifest, holds no JSON null, and never panics
// ValidateManifest.
func FuzzDecodeManifest(f *testing.F) {
	// The manifest of Tracker as createApp stores it.
	f.Add([]byte(`{"name":"Tracker","scopes":["events:subscribe","messages:read"],"events":["message.created"],"delivery":{"mode":"webhook","events_url":"https://hooks.example.com/bothy/events"}}`))
	// The smallest manifest: lists and delivery absent.
	f.Add([]byte(`{"name":"Sam's helper"}`))
	// Explicit nulls, which the stored form never holds.
	f.Add([]byte(`{"name":null,"scopes":null,"delivery":null}`))
	// Not an object.
	f.Add([]byte(`["Tracker"]`))
	// Unknown members and an interactions address.
	f.Add([]byte(`{"name":"Robin","extra":1,"delivery":{"mode":"none","interactions_url":"https://hooks.example.com/i"}}`))
	hosts, err := hostlist.Parse([]string{"hooks.example.com"})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := domain.DecodeManifest(raw)
		if err != nil {
			return
		}
		_ = domain.ValidateManifest(m, hosts)
		enc, err := domain.EncodeManifest(m)
		require.NoError(t, err)
		var tree any
		require.NoError(t, json.Unmarshal(enc, &tree))
		require.False(t, holdsNull(tree), "no JSON null (ADR 0053)")
		again, err := domain.DecodeManifest(enc)
		require.NoError(t, err)
		require.Equal(t, m, again)
	})
}

// holdsNull reports whether a decoded JSON value holds null anywhere.
func holdsNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if holdsNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsNull(e) {
				return true
			}
		}
	}
	return false
}
