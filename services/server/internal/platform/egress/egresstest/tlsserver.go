package egresstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
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
	if len(hostnames) == 0 {
		hostnames = []string{DefaultHost}
	}
	cert, pool := issue(t, hostnames)

	srv := httptest.NewUnstartedServer(handler)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("egresstest: listen on 127.0.0.1: %v", err)
	}
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	return &TLSServer{Server: srv, Port: l.Addr().(*net.TCPAddr).Port, RootCAs: pool}
}

// issue creates a CA and a leaf certificate for hostnames signed by it.
func issue(t testing.TB, hostnames []string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	// The validity window only has to cover the test run; real time is what
	// crypto/tls verifies against.
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("egresstest: CA key: %v", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "egresstest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("egresstest: CA certificate: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatalf("egresstest: parse CA certificate: %v", err)
	}

	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("egresstest: leaf key: %v", err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: hostnames[0]},
		DNSNames:     hostnames,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("egresstest: leaf certificate: %v", err)
	}

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: leafKey}, pool
}
