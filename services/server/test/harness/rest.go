package harness

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/localca"
	"bothy/server/internal/wire"
)

// Support is the small world a test builds through the REST API of a
// running process: Robin (owner) and Alex (member, write on Support) with
// their session tokens, the space Support and its channel Eskalation.
type Support struct {
	Robin, Alex       string // session tokens
	AlexID            string
	Space, Eskalation string
}

// CreateSupport builds Support through the public listener of cfg, as an
// owner would: Robin signs in (CreateOwner made him), creates Alex, the
// space and the channel. Any unexpected answer fails the test.
func CreateSupport(t testing.TB, cfg *wire.Config) Support {
	t.Helper()
	var s Support
	s.Robin = Call(t, cfg, "", "POST", "/sessions", map[string]any{"email": "robin@example.com", "password": Password}, http.StatusCreated)["token"].(string)
	s.AlexID = Call(t, cfg, s.Robin, "POST", "/people",
		map[string]any{"email": "alex@example.com", "display_name": "Alex", "password": Password, "role": "member"}, http.StatusCreated)["id"].(string)
	s.Alex = Call(t, cfg, "", "POST", "/sessions", map[string]any{"email": "alex@example.com", "password": Password}, http.StatusCreated)["token"].(string)
	s.Space = Call(t, cfg, s.Robin, "POST", "/spaces", map[string]any{"name": "Support"}, http.StatusCreated)["id"].(string)
	Call(t, cfg, s.Robin, "POST", "/spaces/"+s.Space+"/members", map[string]any{"person_id": s.AlexID, "level": "write"}, http.StatusCreated)
	s.Eskalation = Call(t, cfg, s.Robin, "POST", "/spaces/"+s.Space+"/channels", map[string]any{"name": "Eskalation"}, http.StatusCreated)["id"].(string)
	return s
}

// StartTLSReceiver serves h over TLS on 127.0.0.1 until the test ends,
// with a certificate for host from a CA made for the test. It returns the
// port and the CA's PEM, for egress.extra_ca_file of the process that
// delivers to it.
func StartTLSReceiver(t testing.TB, host string, h http.Handler) (port int, caPEM []byte) {
	t.Helper()
	issued, err := localca.Issue("test receiver CA", []string{host}, time.Now())
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{issued.Certificate}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port, issued.CAPEM
}
