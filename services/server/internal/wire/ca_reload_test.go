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
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "received") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{receiver.Certificate}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	caFile := filepath.Join(t.TempDir(), "extra_ca.pem")
	require.NoError(t, os.WriteFile(caFile, other.CAPEM, 0o600))

	b := startProcessWith(t, wire.RoleWorker, nil, wire.Deps{
		Resolver: egresstest.NewResolver(map[string][]netip.Addr{host: {netip.MustParseAddr("127.0.0.1")}}),
	},
		"BOTHY_EGRESS_EXTRA_CA_FILE="+caFile,
		"BOTHY_EGRESS_EXTRA_CA_CHECK_INTERVAL=45s",
		fmt.Sprintf("BOTHY_WEBHOOK_ALLOWED_HOSTS=%s:%d", host, port),
		fmt.Sprintf("BOTHY_EGRESS_ALLOWED_HOSTS=%s:%d;allow_private", host, port))
	send := func() error {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, fmt.Sprintf("https://%s:%d/hook", host, port), strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := b.proc.Modules().WebhookEgress.Do(req)
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
