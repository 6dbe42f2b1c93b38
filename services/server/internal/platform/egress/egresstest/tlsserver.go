package egresstest

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"bothy/server/internal/platform/localca"
)

// DefaultHost is the host name a TLSServer's certificate names when the test
// gives none.
const DefaultHost = "hooks.example.com"

// TLSServer is an httptest TLS server on 127.0.0.1 whose certificate is
// issued for example.com host names by a certificate authority generated for
// this one server.
type TLSServer struct {
	*httptest.Server
	// Port is the TCP port the server listens on (127.0.0.1).
	Port int
	// RootCAs trusts exactly the server's certificate authority; pass it as
	// egress.Options.RootCAs.
	RootCAs *x509.CertPool
}

// NewTLSServer starts handler behind TLS on 127.0.0.1 and a free port, with a
// certificate valid for hostnames (DefaultHost when none is given) and for no
// IP address, so a client must send one of those names as TLS server name.
// The server speaks HTTP/1.1 and HTTP/2 and is closed when the test ends.
// Any failure to build the certificate fails the test.
func NewTLSServer(t testing.TB, handler http.Handler, hostnames ...string) *TLSServer {
	t.Helper()
	return newTLSServer(t, handler, true, hostnames)
}

// NewHTTP1TLSServer is NewTLSServer for a server that speaks HTTP/1.1 only,
// as many webhook receivers do: every request in flight at once needs a
// connection of its own, so a test sees how the client pools them.
func NewHTTP1TLSServer(t testing.TB, handler http.Handler, hostnames ...string) *TLSServer {
	t.Helper()
	return newTLSServer(t, handler, false, hostnames)
}

func newTLSServer(t testing.TB, handler http.Handler, http2 bool, hostnames []string) *TLSServer {
	t.Helper()
	if len(hostnames) == 0 {
		hostnames = []string{DefaultHost}
	}
	// The validity window only has to cover the test run; real time is
	// what crypto/tls verifies against.
	issued, err := localca.Issue("egresstest CA", hostnames, time.Now())
	if err != nil {
		t.Fatalf("egresstest: %v", err)
	}

	srv := httptest.NewUnstartedServer(handler)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("egresstest: listen on 127.0.0.1: %v", err)
	}
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.EnableHTTP2 = http2
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{issued.Certificate}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	return &TLSServer{Server: srv, Port: l.Addr().(*net.TCPAddr).Port, RootCAs: issued.Roots()}
}
