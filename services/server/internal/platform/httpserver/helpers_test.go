package httpserver_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var (
	alex  = actor.Principal{ID: ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a21"), Kind: actor.KindPerson, Role: actor.RoleMember}
	sam   = actor.Principal{ID: ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a22"), Kind: actor.KindPerson, Role: actor.RoleMember}
	robin = actor.Principal{ID: ids.MustParse("0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a23"), Kind: actor.KindPerson, Role: actor.RoleOwner}
)

func newEnv(t *testing.T) *httpservertest.Env {
	t.Helper()
	return httpservertest.New(t, pgtest.New(t), httpservertest.Options())
}

// seen is what the echo handler reports about its request.
type seen struct {
	PrincipalID   ids.ID     `json:"principal_id"`
	Kind          actor.Kind `json:"kind"`
	CorrelationID string     `json:"correlation_id"`
	AppID         string     `json:"app_id"`
}

// echo answers 200 with what the chain put into the request.
func echo(w http.ResponseWriter, r *http.Request) {
	p := actor.From(r.Context())
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(seen{p.ID, p.Kind, correlation.From(r.Context()), r.PathValue("appId")})
}

func decodeSeen(t *testing.T, resp *http.Response) seen {
	t.Helper()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var s seen
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&s))
	return s
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

var getApp = httpserver.Route{Operation: "getApp", Method: http.MethodGet, Pattern: "/api/v1/apps/{appId}"}

var getWebhookKeys = httpserver.Route{
	Operation: "getWebhookKeys", Method: http.MethodGet, Pattern: "/api/v1/instance/webhook-keys",
	RateClass: httpserver.RateClassPublicAuth, CORS: true,
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
