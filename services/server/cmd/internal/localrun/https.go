package localrun

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"bothy/server/internal/platform/localca"
)

// HTTPSServer is an HTTPS server on 127.0.0.1 and a free port with a
// certificate for one host name from a certificate authority made for
// this one server (platform/localca): the webhook receivers of the demo
// and the benchmark. A bothy process trusts it through
// egress.extra_ca_file (the file holding CAPEM).
type HTTPSServer struct {
	// Port is the port it listens on.
	Port int
	// CAPEM is the authority's certificate in PEM form.
	CAPEM []byte

	srv *http.Server
	ln  net.Listener
}

// NewHTTPSServer issues a CA named caName and a certificate for host
// signed by it and listens on 127.0.0.1 and a free port with handler h;
// Start serves. It fails when no certificate could be made or no port is
// free.
func NewHTTPSServer(caName, host string, h http.Handler) (*HTTPSServer, error) {
	issued, err := localca.Issue(caName, []string{host}, time.Now())
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiver: listening on 127.0.0.1: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{issued.Certificate}, MinVersion: tls.VersionTLS12},
	}
	return &HTTPSServer{
		Port:  ln.Addr().(*net.TCPAddr).Port,
		CAPEM: issued.CAPEM,
		srv:   srv,
		ln:    tls.NewListener(ln, srv.TLSConfig),
	}, nil
}

// Start serves in the background until Stop.
func (s *HTTPSServer) Start() { go func() { _ = s.srv.Serve(s.ln) }() }

// Stop closes the listener and every connection, waiting at most until ctx
// ends for requests in flight.
func (s *HTTPSServer) Stop(ctx context.Context) {
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
}
