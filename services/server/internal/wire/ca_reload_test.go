package wire_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/localca"
	"bothy/server/internal/wire"
)

// TestExtraCAFileIsReloadedWhenItChanges: a worker whose
// egress.extra_ca_file trusts another authority cannot reach the receiver;
// once the file holds the receiver's authority, the next check makes the
// webhook egress client trust it, with one log line; a file without a
// certificate keeps the roots in use.
func TestExtraCAFileIsReloadedWhenItChanges(t *testing.T) {
	t.Parallel()
	const host = "hooks.example.com"
	receiver, err := localca.Issue("receiver CA", []string{host}, time.Now())
	require.NoError(t, err)
	other, err := localca.Issue("other CA", []string{host}, time.Now())
	require.NoError(t, err)
	port := startReceiver(t, receiver.Certificate, nil)
	caFile := filepath.Join(t.TempDir(), "extra_ca.pem")
	require.NoError(t, os.WriteFile(caFile, other.CAPEM, 0o600))

	b := startWebhookWorker(t, host, port, caFile, "BOTHY_EGRESS_EXTRA_CA_CHECK_INTERVAL=45s")
	send := func() error {
		resp, err := sendHook(t, b, host, port)
		if err == nil {
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		return err
	}
	var verr *tls.CertificateVerificationError

	require.Equal(t, 45*time.Second, <-b.timer.asked, "the watch waits egress.extra_ca_check_interval")
	require.ErrorAs(t, send(), &verr, "the receiver's authority is not trusted yet")

	require.NoError(t, os.WriteFile(caFile, []byte("not a certificate\n"), 0o600))
	b.timer.fire <- time.Now()
	<-b.timer.asked
	require.Equal(t, 1, b.logs.count("holds no PEM certificate, keeping the current roots"))
	require.ErrorAs(t, send(), &verr)

	require.NoError(t, os.WriteFile(caFile, receiver.CAPEM, 0o600))
	b.timer.fire <- time.Now()
	<-b.timer.asked
	require.Equal(t, 1, b.logs.count("egress.extra_ca_file reloaded"))
	require.NoError(t, send(), "trusted from the next connection on")

	b.timer.fire <- time.Now() // unchanged: no reload
	<-b.timer.asked
	require.Equal(t, 1, b.logs.count("egress.extra_ca_file reloaded"))
}

// TestStopClosesTheIdleWebhookConnections: a connection the webhook egress
// client keeps alive to a receiver after a request is closed by the
// process when it stops, not left open until the receiver's idle timeout.
func TestStopClosesTheIdleWebhookConnections(t *testing.T) {
	t.Parallel()
	const host = "hooks.example.com"
	ca, err := localca.Issue("receiver CA", []string{host}, time.Now())
	require.NoError(t, err)
	closed := make(chan struct{}, 1)
	port := startReceiver(t, ca.Certificate, func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	})
	caFile := filepath.Join(t.TempDir(), "extra_ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca.CAPEM, 0o600))
	b := startWebhookWorker(t, host, port, caFile)
	resp, err := sendHook(t, b, host, port)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, closed, "the connection is kept alive for the next request")

	b.cancel() // SIGTERM
	require.NoError(t, b.wait())
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the stopped process left its connection to the receiver open")
	}
}

// startReceiver starts a TLS receiver on 127.0.0.1 with cert that answers
// every request with 200; connState, when not nil, sees its connections'
// states. It returns the port.
func startReceiver(t *testing.T, cert tls.Certificate, connState func(net.Conn, http.ConnState)) int {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "received") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.Config.ConnState = connState
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// startWebhookWorker runs a worker whose webhook egress client reaches
// host:port (resolved to 127.0.0.1) and trusts the authorities in caFile.
func startWebhookWorker(t *testing.T, host string, port int, caFile string, env ...string) *runBundle {
	t.Helper()
	return startProcessWith(t, wire.RoleWorker, nil, wire.Deps{
		Resolver: egresstest.NewResolver(map[string][]netip.Addr{host: {netip.MustParseAddr("127.0.0.1")}}),
	}, append([]string{
		"BOTHY_EGRESS_EXTRA_CA_FILE=" + caFile,
		fmt.Sprintf("BOTHY_WEBHOOK_ALLOWED_HOSTS=%s:%d", host, port),
		fmt.Sprintf("BOTHY_EGRESS_ALLOWED_HOSTS=%s:%d;allow_private", host, port),
	}, env...)...)
}

// sendHook posts {} to https://host:port/hook through the worker's webhook
// egress client.
func sendHook(t *testing.T, b *runBundle, host string, port int) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, fmt.Sprintf("https://%s:%d/hook", host, port), strings.NewReader("{}"))
	require.NoError(t, err)
	return b.proc.Modules().WebhookEgress.Do(req)
}
