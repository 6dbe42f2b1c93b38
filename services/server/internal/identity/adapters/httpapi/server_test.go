package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/identity"
	"bothy/server/internal/identity/adapters/httpapi"
	"bothy/server/internal/identity/app"
	"bothy/server/internal/identity/identitytest"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/idempotencypg"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// noApps is the AppFactsSource of these tests: no app is installed (the
// apps module implements the real one).
type noApps struct{}

func (noApps) AppFacts(context.Context, ids.ID) (identity.AppFacts, bool, error) {
	return identity.AppFacts{}, false, nil
}

// others gives the server the methods of the other modules' operations,
// through a nil interface one level deeper than Server's, so Server's
// methods win; the others are never called here.
type others struct{ api.StrictServerInterface }

type server struct {
	*httpapi.Server
	others
}

type testBundle struct {
	db    *pgtest.DB
	clock *clock.Fake
	id    *identitytest.Env
	hs    *httpserver.Server
}

// setup serves the identity operations through the real chain with the
// identity Service as the authenticator.
func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{db: pgtest.New(t), clock: clock.NewFake(httpservertest.Start)}
	b.id = identitytest.New(t, b.db, b.clock, authztest.NewAuthorizer(t, b.db, b.clock, nil), noApps{}, identitytest.Options())
	uow := pg.NewUnitOfWork(b.db.App, 3, 5*time.Second)
	store, err := idempotencypg.New(b.db.App, uow, b.clock, idempotencypg.Options{KeyTTL: httpservertest.KeyTTL, PurgeBatchSize: 100})
	require.NoError(t, err)
	b.hs, err = httpserver.New(httpservertest.Options(), httpserver.Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Clock: b.clock, Authenticator: b.id.Service, Idempotency: store})
	require.NoError(t, err)
	require.NoError(t, api.Mount(b.hs, server{Server: httpapi.New(b.id.Service)}))
	return b
}

// do sends a request with an optional bearer token and JSON body and
// returns the status, the headers and the raw body.
func (b *testBundle) do(t *testing.T, method, path, token string, body any, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	r := httptest.NewRequest(method, api.BasePath+path, rd)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	b.hs.ServeHTTP(w, r)
	return w.Code, w.Header(), w.Body.Bytes()
}

func decode[T any](t *testing.T, schema string, raw []byte) T {
	t.Helper()
	var generic any
	require.NoError(t, json.Unmarshal(raw, &generic), string(raw))
	doc, err := openapi3.NewLoader().LoadFromData(api.Spec())
	require.NoError(t, err)
	require.NoError(t, doc.Components.Schemas[schema].Value.VisitJSON(generic), "the body validates against %s", schema)
	var out T
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

func problem(t *testing.T, raw []byte) httpserver.Problem {
	t.Helper()
	var p httpserver.Problem
	require.NoError(t, json.Unmarshal(raw, &p), string(raw))
	return p
}

func (b *testBundle) signIn(t *testing.T, email string) api.SessionCreated {
	t.Helper()
	status, _, raw := b.do(t, http.MethodPost, "/sessions", "", api.SessionCreate{Email: email, Password: identitytest.Password})
	require.Equal(t, http.StatusCreated, status, string(raw))
	return decode[api.SessionCreated](t, "SessionCreated", raw)
}

func TestSessionsOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	robin := b.id.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)

	s := b.signIn(t, "Robin@example.com")
	require.Equal(t, robin.ID, s.Session.PersonId)
	require.NotNil(t, s.Session.StepUpAt)
	require.True(t, strings.HasPrefix(s.Token, "bts_"))

	status, _, raw := b.do(t, http.MethodGet, "/me", s.Token, nil)
	require.Equal(t, http.StatusOK, status)
	me := decode[api.Person](t, "Person", raw)
	require.Equal(t, api.Person{Id: robin.ID, Email: "robin@example.com", DisplayName: "Robin", Role: "owner", CreatedAt: robin.CreatedAt}, me)

	// A wrong password and an unknown email answer the same 401.
	var bodies []httpserver.Problem
	for _, in := range []api.SessionCreate{{Email: "robin@example.com", Password: "wrong password"}, {Email: "sam@example.com", Password: identitytest.Password}} {
		status, header, raw := b.do(t, http.MethodPost, "/sessions", "", in)
		require.Equal(t, http.StatusUnauthorized, status)
		require.Equal(t, "Bearer", header.Get("WWW-Authenticate"))
		p := problem(t, raw)
		p.RequestID = ""
		bodies = append(bodies, p)
	}
	require.Equal(t, bodies[0], bodies[1])
	require.Equal(t, errs.CodeUnauthorized, bodies[0].Code)

	b.clock.Advance(authztest.StepUpMaxAge + time.Minute)
	status, _, raw = b.do(t, http.MethodPost, "/sessions/current/step-up", s.Token, api.StepUpRequest{Password: identitytest.Password})
	require.Equal(t, http.StatusOK, status, string(raw))
	stepped := decode[api.Session](t, "Session", raw)
	require.Equal(t, s.Session.Id, stepped.Id)
	require.True(t, b.clock.Now().Equal(*stepped.StepUpAt))

	status, _, _ = b.do(t, http.MethodDelete, "/sessions/current", s.Token, nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _, _ = b.do(t, http.MethodGet, "/me", s.Token, nil)
	require.Equal(t, http.StatusUnauthorized, status, "a revoked session authenticates nobody")

	status, _, raw = b.do(t, http.MethodPost, "/sessions", "", map[string]any{"email": "robin@example.com", "password": "x", "remember": true})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, errs.CodeValidationFailed, problem(t, raw).Code)
}

func TestPersonalTokensOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.id.AddPerson(t, "sam@example.com", "Sam", actor.RoleMember)
	s := b.signIn(t, "sam@example.com")

	status, _, raw := b.do(t, http.MethodPost, "/me/tokens", s.Token, api.PersonalTokenCreate{Name: "deploy"}, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusCreated, status, string(raw))
	created := decode[api.PersonalTokenCreated](t, "PersonalTokenCreated", raw)
	require.True(t, strings.HasPrefix(created.Secret, "btp_"))

	status, header, raw := b.do(t, http.MethodPost, "/me/tokens", s.Token, api.PersonalTokenCreate{Name: "deploy"}, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusConflict, status)
	require.Equal(t, "true", header.Get("Idempotent-Replay"))
	require.Equal(t, "one_time_secret", problem(t, raw).Reason)
	require.NotContains(t, string(raw), created.Secret)
	httpservertest.RequireSecretAbsent(t, b.db.Owner, created.Secret, "idempotency_keys", "personal_tokens", "audit_events")

	b.clock.Advance(time.Second)
	status, _, raw = b.do(t, http.MethodPost, "/me/tokens", created.Secret, api.PersonalTokenCreate{Name: "second"})
	require.Equal(t, http.StatusCreated, status, string(raw))
	second := decode[api.PersonalTokenCreated](t, "PersonalTokenCreated", raw)

	status, _, raw = b.do(t, http.MethodGet, "/me/tokens", s.Token, nil)
	require.Equal(t, http.StatusOK, status)
	list := decode[api.PersonalTokenList](t, "PersonalTokenList", raw)
	require.Equal(t, []api.PersonalToken{second.Token, created.Token}, list.Items, "newest first")
	require.NotContains(t, string(raw), created.Secret)

	status, _, _ = b.do(t, http.MethodDelete, "/me/tokens/"+created.Token.Id.String(), s.Token, nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _, _ = b.do(t, http.MethodGet, "/me", created.Secret, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, raw = b.do(t, http.MethodDelete, "/me/tokens/"+created.Token.Id.String(), s.Token, nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, errs.CodeNotFound, problem(t, raw).Code)

	status, _, raw = b.do(t, http.MethodPost, "/sessions/current/step-up", second.Secret, api.StepUpRequest{Password: identitytest.Password})
	require.Equal(t, http.StatusNotFound, status, "a personal token never steps up")
	require.Equal(t, errs.CodeNotFound, problem(t, raw).Code)
}

func TestCreatePersonOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.id.AddPerson(t, "robin@example.com", "Robin", actor.RoleOwner)
	b.id.AddPerson(t, "alex@example.com", "Alex", actor.RoleMember)
	robin := b.signIn(t, "robin@example.com")
	alex := b.signIn(t, "alex@example.com")
	body := api.PersonCreate{Email: "sam@example.com", DisplayName: "Sam", Password: identitytest.Password}

	status, _, raw := b.do(t, http.MethodPost, "/people", robin.Token, body)
	require.Equal(t, http.StatusCreated, status, string(raw))
	sam := decode[api.Person](t, "Person", raw)
	require.Equal(t, api.PersonRole("member"), sam.Role)

	status, _, raw = b.do(t, http.MethodPost, "/people", alex.Token, api.PersonCreate{Email: "x@example.com", DisplayName: "X", Password: identitytest.Password})
	require.Equal(t, http.StatusNotFound, status, "a member gets 404")
	require.Equal(t, errs.CodeNotFound, problem(t, raw).Code)

	body.Email = "sam2@example.com"
	b.clock.Advance(authztest.StepUpMaxAge + time.Minute)
	status, header, raw := b.do(t, http.MethodPost, "/people", robin.Token, body)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, errs.CodeStepUpRequired, problem(t, raw).Code)
	require.Contains(t, header.Get("WWW-Authenticate"), "insufficient_user_authentication")

	status, _, raw = b.do(t, http.MethodPost, "/people", robin.Token, api.PersonCreate{Email: "not-an-address", DisplayName: "X", Password: identitytest.Password})
	require.Equal(t, http.StatusBadRequest, status, string(raw))

	b.clock.Advance(-authztest.StepUpMaxAge - time.Minute)
	status, _, raw = b.do(t, http.MethodPost, "/people", robin.Token, api.PersonCreate{Email: "SAM@example.com", DisplayName: "Sam", Password: identitytest.Password})
	require.Equal(t, http.StatusConflict, status)
	require.Equal(t, app.ReasonEmailTaken, problem(t, raw).Reason)
}
