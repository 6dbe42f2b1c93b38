package domain_test

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/hostlist"
)

func testHosts(t testing.TB) hostlist.List {
	l, err := hostlist.Parse([]string{
		"hooks.example.com",
		"api.example.com:8443",
		"192.0.2.10",
		"[2001:db8::1]:8443",
	})
	require.NoError(t, err)
	return l
}

func TestValidateTarget(t *testing.T) {
	t.Parallel()
	allowed := testHosts(t)

	for _, tc := range []struct {
		name string
		raw  string
		want domain.Target
	}{
		{"a listed host on the https port", "https://hooks.example.com/bothy/events?source=alex",
			domain.Target{URL: "https://hooks.example.com/bothy/events?source=alex", Host: "hooks.example.com", Port: 443}},
		{"no path", "https://hooks.example.com",
			domain.Target{URL: "https://hooks.example.com", Host: "hooks.example.com", Port: 443}},
		{"upper case and a trailing dot are normalised", "https://HOOKS.Example.COM./In",
			domain.Target{URL: "https://hooks.example.com/In", Host: "hooks.example.com", Port: 443}},
		{"an upper case scheme is normalised", "HTTPS://hooks.example.com/",
			domain.Target{URL: "https://hooks.example.com/", Host: "hooks.example.com", Port: 443}},
		{"the explicit default port is dropped", "https://hooks.example.com:443/in",
			domain.Target{URL: "https://hooks.example.com/in", Host: "hooks.example.com", Port: 443}},
		{"a listed host on its listed port", "https://api.example.com:8443/in",
			domain.Target{URL: "https://api.example.com:8443/in", Host: "api.example.com", Port: 8443}},
		{"a listed IPv4 literal", "https://192.0.2.10/in",
			domain.Target{URL: "https://192.0.2.10/in", Host: "192.0.2.10", Port: 443}},
		{"an IPv4-mapped IPv6 literal is the IPv4 address", "https://[::ffff:192.0.2.10]/in",
			domain.Target{URL: "https://192.0.2.10/in", Host: "192.0.2.10", Port: 443}},
		{"a listed IPv6 literal", "https://[2001:DB8:0::1]:8443/in",
			domain.Target{URL: "https://[2001:db8::1]:8443/in", Host: "2001:db8::1", Port: 8443}},
		{"percent-encoded UTF-8 is kept", "https://hooks.example.com/gr%C3%BC%C3%9Fe?from=sam%20and%20robin",
			domain.Target{URL: "https://hooks.example.com/gr%C3%BC%C3%9Fe?from=sam%20and%20robin", Host: "hooks.example.com", Port: 443}},
		{"an escaped path is kept", "https://hooks.example.com/a%20b/c",
			domain.Target{URL: "https://hooks.example.com/a%20b/c", Host: "hooks.example.com", Port: 443}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.ValidateTarget(tc.raw, allowed)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}

	for _, tc := range []struct {
		name     string
		raw      string
		code     errs.Code
		itemCode string
	}{
		{"an empty URL", "", errs.CodeValidationFailed, "required"},
		{"http", "http://hooks.example.com/in", errs.CodeValidationFailed, "https_required"},
		{"http on a listed host and port", "http://hooks.example.com:443/in", errs.CodeValidationFailed, "https_required"},
		{"another scheme", "ftp://hooks.example.com/in", errs.CodeValidationFailed, "https_required"},
		{"no scheme", "hooks.example.com/in", errs.CodeValidationFailed, "https_required"},
		{"a scheme-relative URL", "//hooks.example.com/in", errs.CodeValidationFailed, "https_required"},
		{"user info", "https://alex@hooks.example.com/in", errs.CodeValidationFailed, "userinfo_not_allowed"},
		{"user info with a password", "https://alex:pw@hooks.example.com/in", errs.CodeValidationFailed, "userinfo_not_allowed"},
		{"an empty user info", "https://@hooks.example.com/in", errs.CodeValidationFailed, "userinfo_not_allowed"},
		{"a fragment", "https://hooks.example.com/in#top", errs.CodeValidationFailed, "fragment_not_allowed"},
		{"an empty fragment", "https://hooks.example.com/in#", errs.CodeValidationFailed, "fragment_not_allowed"},
		{"no host", "https:///in", errs.CodeValidationFailed, "invalid_url"},
		{"an opaque URL", "https:hooks.example.com", errs.CodeValidationFailed, "invalid_url"},
		{"a space in the host", "https://hooks example.com/", errs.CodeValidationFailed, "invalid_url"},
		{"a control character", "https://hooks.example.com/\x00", errs.CodeValidationFailed, "invalid_url"},
		{"an empty port", "https://hooks.example.com:/in", errs.CodeValidationFailed, "invalid_url"},
		{"port zero", "https://hooks.example.com:0/in", errs.CodeValidationFailed, "invalid_url"},
		{"a port above 65535", "https://hooks.example.com:65536/in", errs.CodeValidationFailed, "invalid_url"},
		{"an underscore in the host", "https://my_hooks.example.com/in", errs.CodeValidationFailed, "invalid_url"},
		{"an empty label", "https://hooks..example.com/in", errs.CodeValidationFailed, "invalid_url"},
		{"an IPv6 zone", "https://[fe80::1%25eth0]/in", errs.CodeValidationFailed, "invalid_url"},
		{"leading white space", " https://hooks.example.com/in", errs.CodeValidationFailed, "invalid_url"},
		{"a space in the query", "https://hooks.example.com/in?from=alex and sam", errs.CodeValidationFailed, "invalid_url"},
		{"non-ASCII text in the path", "https://hooks.example.com/gr\u00fc\u00dfe", errs.CodeValidationFailed, "invalid_url"},
		{"a backslash in the path", "https://hooks.example.com/a\\b", errs.CodeValidationFailed, "invalid_url"},
		{"a quote in the query", "https://hooks.example.com/in?q=\"x\"", errs.CodeValidationFailed, "invalid_url"},
		{"a host not listed", "https://other.example.com/in", errs.CodeWebhookHostNotAllowed, "webhook_host_not_allowed"},
		{"a listed host on an unlisted port", "https://hooks.example.com:8443/in", errs.CodeWebhookHostNotAllowed, "webhook_host_not_allowed"},
		{"a host listed only on another port", "https://api.example.com/in", errs.CodeWebhookHostNotAllowed, "webhook_host_not_allowed"},
		{"an IP literal not listed", "https://192.0.2.11/in", errs.CodeWebhookHostNotAllowed, "webhook_host_not_allowed"},
		{"loopback not listed", "https://127.0.0.1/in", errs.CodeWebhookHostNotAllowed, "webhook_host_not_allowed"},
		{"an IPv6 literal on an unlisted port", "https://[2001:db8::1]/in", errs.CodeWebhookHostNotAllowed, "webhook_host_not_allowed"},
		{"localhost not listed", "https://localhost/in", errs.CodeWebhookHostNotAllowed, "webhook_host_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.ValidateTarget(tc.raw, allowed)
			require.Equal(t, domain.Target{}, got)
			e, ok := errs.As(err)
			require.True(t, ok, "want *errs.Error, got %v", err)
			require.Equal(t, tc.code, e.Code)
			require.Len(t, e.Fields, 1)
			require.Equal(t, "/url", e.Fields[0].Pointer)
			require.Equal(t, tc.itemCode, e.Fields[0].Code)
			require.NotContains(t, e.Error(), "example.com", "error text carries no input")
		})
	}
}

func TestValidateTargetWithAnEmptyListAllowsNothing(t *testing.T) {
	t.Parallel()
	_, err := domain.ValidateTarget("https://hooks.example.com/in", nil)
	require.Equal(t, errs.CodeWebhookHostNotAllowed, errs.CodeOf(err))
}

func TestValidateTargetDetailTellsHostFromPort(t *testing.T) {
	t.Parallel()
	allowed := testHosts(t)
	_, errHost := domain.ValidateTarget("https://other.example.com/", allowed)
	_, errPort := domain.ValidateTarget("https://hooks.example.com:8443/", allowed)
	hostDetail := errHost.(*errs.Error).Fields[0].Detail
	portDetail := errPort.(*errs.Error).Fields[0].Detail
	require.NotEmpty(t, hostDetail)
	require.NotEmpty(t, portDetail)
	require.NotEqual(t, hostDetail, portDetail)
}

func FuzzValidateTarget(f *testing.F) {
	f.Add("https://hooks.example.com/in?x=1")     // accepted
	f.Add("https://HOOKS.example.com.:443/in")    // normalised
	f.Add("https://[2001:db8::1]:8443/in")        // IPv6 literal
	f.Add("https://[::ffff:192.0.2.10]/")         // IPv4-mapped
	f.Add("http://hooks.example.com/")            // http
	f.Add("https://alex@hooks.example.com/#frag") // user info and fragment
	f.Add("https://[fe80::1%25eth0]:8443/")       // zone
	f.Add("https://hooks.example.com:99999999999999999999/")
	f.Add("https:%")
	f.Add("https://hooks.example.com/gr%C3%BC?q=a%20b") // percent-encoded
	allowed := testHosts(f)
	f.Fuzz(func(t *testing.T, raw string) {
		target, err := domain.ValidateTarget(raw, allowed)
		if err != nil {
			if _, ok := errs.As(err); !ok {
				t.Fatalf("%q: error is not *errs.Error: %v", raw, err)
			}
			return
		}
		u, perr := url.Parse(target.URL)
		if perr != nil {
			t.Fatalf("%q accepted as unparsable %q", raw, target.URL)
		}
		if u.Scheme != "https" || u.User != nil || u.Fragment != "" || strings.ContainsAny(target.URL, "#\\\"<>") ||
			strings.IndexFunc(target.URL, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
			t.Fatalf("%q accepted as %q", raw, target.URL)
		}
		port := 443
		if p := u.Port(); p != "" {
			port, _ = strconv.Atoi(p)
		}
		if u.Hostname() != target.Host || port != target.Port {
			t.Fatalf("%q: URL %q does not match host %q port %d", raw, target.URL, target.Host, target.Port)
		}
		if _, ok := allowed.Match(target.Host, target.Port); !ok {
			t.Fatalf("%q accepted with unlisted %s", raw, net.JoinHostPort(target.Host, strconv.Itoa(target.Port)))
		}
		// The normalised URL is a fixed point.
		again, err := domain.ValidateTarget(target.URL, allowed)
		if err != nil || again != target {
			t.Fatalf("%q: normalised %q does not validate to itself: %v %+v", raw, target.URL, err, again)
		}
	})
}

func TestValidateEventTypes(t *testing.T) {
	t.Parallel()
	granted := []string{"message.created", "message.deleted", "channel.created", "agent.invocation.requested"}
	require.NoError(t, domain.ValidateEventTypes([]string{"message.created", "channel.created"}, granted))

	for _, tc := range []struct {
		name   string
		types  []string
		fields []errs.FieldError
	}{
		{"no type", nil, []errs.FieldError{errs.Field("/event_types", "required")}},
		{"an empty list", []string{}, []errs.FieldError{errs.Field("/event_types", "required")}},
		{"a duplicate", []string{"message.created", "channel.created", "message.created"},
			[]errs.FieldError{errs.Field("/event_types/2", "duplicate")}},
		{"an agent-only type", []string{"agent.invocation.requested"},
			[]errs.FieldError{errs.Field("/event_types/0", "not_subscribable")}},
		{"an unknown type", []string{"message.created", "message.exploded"},
			[]errs.FieldError{errs.Field("/event_types/1", "not_subscribable")}},
		{"an empty type", []string{""}, []errs.FieldError{errs.Field("/event_types/0", "not_subscribable")}},
		{"a type outside the installation's event_subscriptions", []string{"message.updated"},
			[]errs.FieldError{errs.Field("/event_types/0", "not_granted")}},
		{"every defect is listed", []string{"message.updated", "message.created", "thread.exploded", "message.created"},
			[]errs.FieldError{
				errs.Field("/event_types/0", "not_granted"),
				errs.Field("/event_types/2", "not_subscribable"),
				errs.Field("/event_types/3", "duplicate"),
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := domain.ValidateEventTypes(tc.types, granted)
			e, ok := errs.As(err)
			require.True(t, ok)
			require.Equal(t, errs.CodeValidationFailed, e.Code)
			require.Equal(t, tc.fields, e.Fields)
		})
	}
}

func TestAppSubscribable(t *testing.T) {
	t.Parallel()
	want := []string{
		"app.installation.updated", "channel.created", "channel.updated", "instance.updated",
		"message.created", "message.deleted", "message.updated", "thread.created",
	}
	require.Equal(t, want, domain.SubscribableEventTypes())
	for _, typ := range want {
		require.True(t, domain.AppSubscribable(typ), typ)
	}
	for _, typ := range []string{"agent.invocation.requested", "", "message", "Message.Created", "message.created "} {
		require.False(t, domain.AppSubscribable(typ), typ)
	}
	list := domain.SubscribableEventTypes()
	list[0] = "changed"
	require.Equal(t, want, domain.SubscribableEventTypes(), "callers get a copy")
}

func TestTargetHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"a stored address gives its host", "https://hooks.example.com/bothy?x=1", "hooks.example.com"},
		{"the port is not part of the host", "https://hooks.example.com:8443/in", "hooks.example.com"},
		{"an IPv6 literal loses its brackets", "https://[2001:db8::1]/in", "2001:db8::1"},
		{"upper case and a trailing dot are normalised", "https://Hooks.Example.COM./in", "hooks.example.com"},
		{"an address that does not parse has no host", "https://hooks.example.com/%zz", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, domain.TargetHost(tc.raw))
		})
	}
}
