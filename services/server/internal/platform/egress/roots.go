package egress

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
)

// conns is one transport with the client over it.
type conns struct {
	transport *http.Transport
	http      *http.Client
}

// newConns builds the transport of the client's policy with roots as the
// trusted certificate authorities (nil: the system pool).
func (c *Client) newConns(roots *x509.CertPool) *conns {
	t := &http.Transport{
		// No proxy, not even from the environment: a proxy would connect to
		// the target on our behalf, past the address guard.
		Proxy:       nil,
		DialContext: c.dial,
		// The transport sets ServerName to the requested host, so the
		// certificate is verified for the name the policy allowed.
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		// The handshake also runs on the detached dial context (see dial).
		TLSHandshakeTimeout:    c.timeout,
		ForceAttemptHTTP2:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: c.maxBytes,
		// net/http keeps two idle connections per host unless told more:
		// deliveries to a host that serves many subscriptions would make a
		// new connection and TLS handshake for most requests.
		MaxIdleConnsPerHost: c.maxIdle,
		IdleConnTimeout:     c.idleFor,
	}
	return &conns{transport: t, http: &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// SetRootCAs replaces the trusted certificate authorities (nil: the system
// pool), for example after egress.extra_ca_file changed. Requests that
// start afterwards use the new roots on new connections; requests in flight
// finish on their connection, and the old pool's idle connections are
// closed, so no connection verified against the old roots is reused. Safe
// for concurrent use with Do.
func (c *Client) SetRootCAs(roots *x509.CertPool) {
	old := c.conns.Swap(c.newConns(roots))
	old.transport.CloseIdleConnections()
}
