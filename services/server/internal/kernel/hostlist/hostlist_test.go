package hostlist_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/hostlist"
)

func TestParseEntry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want hostlist.Entry
	}{
		{"host alone allows the https port", "hooks.example.com", hostlist.Entry{Host: "hooks.example.com", Port: 443}},
		{"explicit port", "hooks.example.com:8443", hostlist.Entry{Host: "hooks.example.com", Port: 8443}},
		{"upper case and trailing dot are normalised", "Hooks.Example.COM.", hostlist.Entry{Host: "hooks.example.com", Port: 443}},
		{"allow_private flag", "hooks.example.com:8443;allow_private", hostlist.Entry{Host: "hooks.example.com", Port: 8443, AllowPrivate: true}},
		{"IPv6 literal with port", "[2001:db8::1]:8443", hostlist.Entry{Host: "2001:db8::1", Port: 8443}},
		{"IPv4 literal", "192.0.2.10", hostlist.Entry{Host: "192.0.2.10", Port: 443}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := hostlist.ParseEntry(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseEntryRejects(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"empty":            "",
		"scheme":           "https://hooks.example.com",
		"path":             "hooks.example.com/x",
		"user info":        "alex@hooks.example.com",
		"port zero":        "hooks.example.com:0",
		"port too large":   "hooks.example.com:70000",
		"port not numeric": "hooks.example.com:https",
		"empty port":       "hooks.example.com:",
		"unknown flag":     "hooks.example.com;allow_everything",
		"bad host":         ":]:0",
		"underscore":       "my_host.example.com",
	} {
		_, err := hostlist.ParseEntry(in)
		require.ErrorIs(t, err, hostlist.ErrInvalidEntry, name)
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	l, err := hostlist.Parse([]string{"hooks.example.com", "api.example.com:8443;allow_private"})
	require.NoError(t, err)

	e, ok := l.Match("HOOKS.example.com.", 443)
	require.True(t, ok)
	require.False(t, e.AllowPrivate)

	_, ok = l.Match("hooks.example.com", 8443)
	require.False(t, ok, "a listed host on an unlisted port")
	require.True(t, l.HostListed("hooks.example.com"))

	e, ok = l.Match("api.example.com", 8443)
	require.True(t, ok)
	require.True(t, e.AllowPrivate)

	_, ok = hostlist.List(nil).Match("hooks.example.com", 443)
	require.False(t, ok, "the empty list allows nothing")
}

func TestParseNamesTheBadIndex(t *testing.T) {
	t.Parallel()
	_, err := hostlist.Parse([]string{"hooks.example.com", "https://x.example.com"})
	require.ErrorContains(t, err, "entry 1")
}

func FuzzParseEntry(f *testing.F) {
	f.Add("hooks.example.com")                    // plain host
	f.Add("hooks.example.com:8443;allow_private") // port and flag
	f.Add("[::1]:443")                            // IPv6 literal
	f.Add("a:b:c")                                // bare IPv6 without brackets
	f.Fuzz(func(t *testing.T, s string) {
		e, err := hostlist.ParseEntry(s)
		if err != nil {
			return
		}
		// Round trip: the rendered form parses to the same entry.
		again, err := hostlist.ParseEntry(e.String())
		if err != nil || again != e {
			t.Fatalf("round trip of %q: %v %+v %+v", s, err, e, again)
		}
		if e.Port < 1 || e.Port > 65535 || e.Host == "" {
			t.Fatalf("accepted %q with %+v", s, e)
		}
	})
}
