package egresstest_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/otel/attr"
)

func TestResolverAnswersKnownHostsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v4 := netip.MustParseAddr("127.0.0.1")
	v6 := netip.MustParseAddr("::1")
	r := egresstest.NewResolver(map[string][]netip.Addr{"Hooks.Example.com.": {v4, v6}})

	for _, tc := range []struct {
		name    string
		network string
		want    []netip.Addr
	}{
		{"network ip gives every address", "ip", []netip.Addr{v4, v6}},
		{"network ip4 gives the IPv4 addresses", "ip4", []netip.Addr{v4}},
		{"network ip6 gives the IPv6 addresses", "ip6", []netip.Addr{v6}},
	} {
		got, err := r.LookupNetIP(ctx, tc.network, "hooks.example.com")
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
	require.Equal(t, 3, r.Lookups("HOOKS.example.com"))

	_, err := r.LookupNetIP(ctx, "ip", "other.example.com")
	var dnsErr *net.DNSError
	require.ErrorAs(t, err, &dnsErr)
	require.True(t, dnsErr.IsNotFound)

	r.Set("other.example.com", v6)
	got, err := r.LookupNetIP(ctx, "ip", "other.example.com")
	require.NoError(t, err)
	require.Equal(t, []netip.Addr{v6}, got)
}

func TestResolverRefusesCancelledLookups(t *testing.T) {
	t.Parallel()
	r := egresstest.NewResolver(map[string][]netip.Addr{"hooks.example.com": {netip.MustParseAddr("127.0.0.1")}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.LookupNetIP(ctx, "ip", "hooks.example.com")
	require.ErrorIs(t, err, context.Canceled)
}

func TestTLSServerIsReachedWithItsPoolAndHostName(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "hello Alex")
	}), "hooks.example.com", "other.example.com")
	require.NotZero(t, srv.Port)

	for _, host := range []string{"hooks.example.com", "other.example.com"} {
		client := &http.Client{Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: srv.RootCAs, MinVersion: tls.VersionTLS12},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Port)))
			},
		}}
		resp, err := client.Get("https://" + host + ":" + strconv.Itoa(srv.Port) + "/")
		require.NoError(t, err, host)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, "hello Alex", string(body))
		client.CloseIdleConnections()
	}
}

func TestTLSServerCertificateNamesOnlyTheGivenHosts(t *testing.T) {
	t.Parallel()
	srv := egresstest.NewTLSServer(t, http.NotFoundHandler())
	cert := srv.Certificate()
	require.Equal(t, []string{"hooks.example.com"}, cert.DNSNames, "hooks.example.com is the default name")
	require.Empty(t, cert.IPAddresses)
}

func TestMetricsCountsBlockedByPurposeAndReason(t *testing.T) {
	t.Parallel()
	m := egresstest.NewMetrics(t)
	require.Zero(t, m.Blocked(t, "webhook", "address_blocked"))

	c, err := m.Provider().Meter("test").Int64Counter("bothy.egress.blocked")
	require.NoError(t, err)
	ctx := context.Background()
	c.Add(ctx, 1, metric.WithAttributes(attr.EgressPurpose.String("webhook"), attr.Reason.String("address_blocked")))
	c.Add(ctx, 1, metric.WithAttributes(attr.EgressPurpose.String("webhook"), attr.Reason.String("address_blocked")))
	c.Add(ctx, 1, metric.WithAttributes(attr.EgressPurpose.String("webhook"), attr.Reason.String("host_not_allowed")))
	c.Add(ctx, 1, metric.WithAttributes(attr.EgressPurpose.String("webhook"), attr.Reason.String("address_blocked"),
		attribute.String("server.address", "hooks.example.com")))

	require.Equal(t, int64(2), m.Blocked(t, "webhook", "address_blocked"), "a point with extra attributes is not counted")
	require.Equal(t, int64(1), m.Blocked(t, "webhook", "host_not_allowed"))
	require.Zero(t, m.Blocked(t, "other", "address_blocked"))
}

func TestLogsRecordsMessageLevelAndAttributes(t *testing.T) {
	t.Parallel()
	logger, logs := egresstest.NewLogs()
	logger.With(string(attr.Reason), "address_blocked").Warn("egress blocked", string(attr.ServerAddress), "hooks.example.com")
	logger.WithGroup("g").Info("grouped", "k", 1)

	got := logs.Records()
	require.Len(t, got, 2)
	require.Equal(t, egresstest.Record{
		Level:   slog.LevelWarn,
		Message: "egress blocked",
		Attrs:   map[string]string{"bothy.reason": "address_blocked", "server.address": "hooks.example.com"},
	}, got[0])
	require.Equal(t, map[string]string{"g.k": "1"}, got[1].Attrs)
}
