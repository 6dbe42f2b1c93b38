package egress_test

import (
	"crypto/x509"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"bothy/server/internal/platform/egress"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/otel/attr"
)

// errorCount returns bothy.egress.errors of purpose webhook for class.
func (b *testBundle) errorCount(t *testing.T, class string) int64 {
	t.Helper()
	return b.metrics.Int64Sum(t, egress.MetricErrors, attribute.NewSet(
		attr.EgressPurpose.String("webhook"), attr.ErrorType.String(class)))
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// TestDoCountsTransportErrorsByClass: a request the policy allowed but
// that failed on the way counts once in bothy.egress.errors with its class;
// a success and a refusal by the policy count nothing there.
func TestDoCountsTransportErrorsByClass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		class string
		do    func(t *testing.T, b *testBundle) error
	}{
		{"a certificate from unknown roots is a tls error", egress.ErrorClassTLS, func(t *testing.T, b *testBundle) error {
			opts := b.options(t, true)
			opts.RootCAs = x509.NewCertPool()
			_, err := b.client(t, opts).Do(post(t, b.url(hooksHost)))
			return err
		}},
		{"an unknown host is a dns error", egress.ErrorClassDNS, func(t *testing.T, b *testBundle) error {
			b.resolver = egresstest.NewResolver(nil)
			_, err := b.client(t, b.options(t, true)).Do(post(t, b.url(hooksHost)))
			return err
		}},
		{"a refused connection is a connection error", egress.ErrorClassConnection, func(t *testing.T, b *testBundle) error {
			port := closedPort(t)
			opts := b.options(t, true)
			opts.Hosts = egress.NewHostPolicy(parse(t, fmt.Sprintf("%s:%d", hooksHost, port)))
			opts.Private = parse(t, fmt.Sprintf("%s:%d;allow_private", hooksHost, port))
			_, err := b.client(t, opts).Do(post(t, fmt.Sprintf("https://%s:%d/", hooksHost, port)))
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, ok)
			require.Error(t, tc.do(t, b))
			for _, class := range []string{egress.ErrorClassTLS, egress.ErrorClassDNS, egress.ErrorClassConnection, egress.ErrorClassTimeout, egress.ErrorClassOther} {
				want := int64(0)
				if class == tc.class {
					want = 1
				}
				require.Equal(t, want, b.errorCount(t, class), "class %s", class)
			}
		})
	}
	t.Run("a success and a refusal count no error", func(t *testing.T) {
		t.Parallel()
		b := setup(t, ok)
		c := b.client(t, b.options(t, true))
		resp, err := c.Do(post(t, b.url(hooksHost)))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		_, err = c.Do(post(t, b.url(otherHost)))
		require.ErrorIs(t, err, egress.ErrBlocked)
		for _, class := range []string{egress.ErrorClassTLS, egress.ErrorClassDNS, egress.ErrorClassConnection, egress.ErrorClassTimeout, egress.ErrorClassOther} {
			require.Zero(t, b.errorCount(t, class), "class %s", class)
		}
	})
}
