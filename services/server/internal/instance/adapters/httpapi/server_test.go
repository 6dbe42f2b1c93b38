package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/instance"
	"bothy/server/internal/instance/adapters/httpapi"
	"bothy/server/internal/instance/instancetest"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// others gives the server the methods of the other modules' operations,
// through a nil interface one level deeper than Server's, so Server's
// methods win; the others are never called here.
type others struct{ api.StrictServerInterface }

type server struct {
	*httpapi.Server
	others
}

type testBundle struct {
	http *httpservertest.Env
	inst *instancetest.Env
}

// jwksMaxAge is agent.jwks_max_age of the tests.
const jwksMaxAge = time.Hour

func setup(t *testing.T) *testBundle {
	t.Helper()
	db := pgtest.New(t)
	b := &testBundle{http: httpservertest.New(t, db, httpservertest.Options())}
	b.inst = instancetest.New(t, db, b.http.Clock, instancetest.DefaultConfig())
	b.inst.Ensure(t)
	srv, err := httpapi.New(b.inst.Service, b.inst.Keys, authztest.NewAuthorizer(t, db, b.http.Clock, nil), httpapi.Options{JWKSMaxAge: jwksMaxAge, Version: "1.2.3"})
	require.NoError(t, err)
	mount(t, b.http.Server, server{Server: srv})
	return b
}

// mount registers every enabled operation on hs the way the role assembly
// does: routes with their rate class and CORS, the request validator, the
// strict handler.
func mount(t *testing.T, hs *httpserver.Server, strict api.StrictServerInterface) {
	t.Helper()
	require.NoError(t, api.Mount(hs, strict))
}

// get sends an anonymous GET and decodes the JSON body into a generic value
// (for schema validation) and into out.
func (b *testBundle) get(t *testing.T, path string, out any) (*http.Response, any) {
	t.Helper()
	resp := b.http.Do(httpservertest.NewRequest(t, http.MethodGet, api.BasePath+path, nil))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, out))
	var generic any
	require.NoError(t, json.Unmarshal(raw, &generic))
	return resp, generic
}

func requireSchema(t *testing.T, name string, v any) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.Spec())
	require.NoError(t, err)
	ref, ok := doc.Components.Schemas[name]
	require.True(t, ok, name)
	require.NoError(t, ref.Value.VisitJSON(v), "the body validates against %s", name)
}

// TestGetWebhookKeys: anonymous 200 with the webhook_out keys in next,
// active and retiring only, public_key whpk_ decoding to the key,
// not_after only when set, Cache-Control and CORS as getJwks; the body
// validates against WebhookKeys; getJwks lists no webhook_out key.
func TestGetWebhookKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	w := instance.PurposeWebhookOut
	now := b.http.Clock.Now()
	first, err := b.inst.Keys.Signer(ctx, w)
	require.NoError(t, err)
	require.NoError(t, b.inst.Store.StartRetiring(ctx, first.KeyID(), now))
	retired := b.inst.AddKey(t, w, instance.KeyRetired, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	active := b.inst.AddKey(t, w, instance.KeyActive, now, time.Time{})
	next := b.inst.AddKey(t, w, instance.KeyNext, now, time.Time{})

	var body api.WebhookKeys
	resp, generic := b.get(t, "/instance/webhook-keys", &body)
	require.Equal(t, "public, max-age=3600", resp.Header.Get("Cache-Control"))
	require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	requireSchema(t, "WebhookKeys", generic)

	want, err := b.inst.Keys.PublicKeys(ctx, w)
	require.NoError(t, err)
	require.Len(t, body.Keys, 3)
	var kids []string
	for i, k := range body.Keys {
		kids = append(kids, k.Kid)
		require.Equal(t, want[i].KeyID, k.Kid)
		require.Equal(t, string(want[i].State), string(k.State))
		der, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(k.PublicKey, "whpk_"))
		require.NoError(t, err)
		pub, err := x509.ParsePKIXPublicKey(der)
		require.NoError(t, err)
		require.Equal(t, want[i].Key, pub.(ed25519.PublicKey))
		if k.State == api.WebhookKeyState(instance.KeyRetiring) {
			require.NotNil(t, k.NotAfter)
			require.True(t, now.Equal(*k.NotAfter))
		} else {
			require.Nil(t, k.NotAfter, "not_after only when set")
		}
	}
	require.Equal(t, []string{active, next, first.KeyID()}, kids)
	require.NotContains(t, kids, retired)
	raw, err := json.Marshal(generic)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "null")

	var jwks api.Jwks
	jresp, jgeneric := b.get(t, "/instance/jwks", &jwks)
	require.Equal(t, resp.Header.Get("Cache-Control"), jresp.Header.Get("Cache-Control"))
	require.Equal(t, resp.Header.Get("Access-Control-Allow-Origin"), jresp.Header.Get("Access-Control-Allow-Origin"))
	requireSchema(t, "Jwks", jgeneric)
	require.Len(t, jwks.Keys, 1, "the agent_token key")
	for _, k := range jwks.Keys {
		require.NotContains(t, append(kids, retired), k.Kid, "getJwks contains no webhook_out key")
	}
}

func TestGetInstance(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec, err := b.inst.Service.Load(context.Background())
	require.NoError(t, err)
	var body api.Instance
	resp, generic := b.get(t, "/instance", &body)
	requireSchema(t, "Instance", generic)
	require.Equal(t, api.Instance{Name: "bothy test", Version: "1.2.3", SyncEpoch: rec.SyncEpoch}, body)
	require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := httpapi.New(b.inst.Service, b.inst.Keys, authztest.NewAuthorizer(t, pgtest.New(t), b.http.Clock, nil), httpapi.Options{Version: "1"})
	require.Error(t, err)
	_, err = httpapi.New(b.inst.Service, b.inst.Keys, authztest.NewAuthorizer(t, pgtest.New(t), b.http.Clock, nil), httpapi.Options{JWKSMaxAge: time.Hour})
	require.Error(t, err)
}
