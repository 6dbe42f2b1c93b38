package httpserver_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
)

func TestAuthenticationPutsThePrincipalIntoTheContext(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(echo))

	anonymous := decodeSeen(t, env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil)))
	require.True(t, anonymous.PrincipalID.IsZero())
	require.Empty(t, anonymous.Kind)

	s := decodeSeen(t, env.Do(env.Auth.As(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil), robin)))
	require.Equal(t, robin.ID, s.PrincipalID)
	require.Equal(t, actor.KindPerson, s.Kind)

	r := httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil)
	r.Header.Set("Authorization", "bearer "+env.Auth.Token(alex))
	require.Equal(t, alex.ID, decodeSeen(t, env.Do(r)).PrincipalID, "the scheme is case-insensitive")
}

func TestBadCredentialsAnswer401(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	ran := false
	env.Server.Handle(getApp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }))
	for _, tc := range []struct {
		name    string
		headers []string
	}{
		{"an unknown token", []string{"Bearer test_unknown"}},
		{"another scheme", []string{"Basic YWxleDpzZWNyZXQ="}},
		{"a scheme without token", []string{"Bearer"}},
		{"an empty token", []string{"Bearer "}},
		{"a token with a space", []string{"Bearer abc def"}},
		{"a token with padding inside", []string{"Bearer ab=c"}},
		{"two headers", []string{"Bearer " + env.Auth.Token(alex), "Bearer " + env.Auth.Token(sam)}},
	} {
		r := httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil)
		for _, h := range tc.headers {
			r.Header.Add("Authorization", h)
		}
		resp := env.Do(r)
		httpservertest.RequireProblem(t, resp, errs.CodeUnauthorized, "")
		require.Equal(t, "Bearer", resp.Header.Get("WWW-Authenticate"), tc.name)
	}
	require.False(t, ran, "the handler never runs without valid credentials")
}

// authenticatorFunc adapts a function to httpserver.Authenticator, so a test
// can script what a token resolves to without an identity store.
type authenticatorFunc func(ctx context.Context, token string) (actor.Principal, error)

func (f authenticatorFunc) Authenticate(ctx context.Context, token string) (actor.Principal, error) {
	return f(ctx, token)
}

func TestAuthenticatorFaultsAnswer500AndATokenOfNobody401(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	env := httpservertest.New(t, db, httpservertest.Options())
	srv, err := httpserver.New(httpservertest.Options(), httpserver.Deps{
		Log: discardLog(), Clock: env.Clock, Idempotency: env.Idempotency,
		Authenticator: authenticatorFunc(func(_ context.Context, token string) (actor.Principal, error) {
			if token == "broken" {
				return actor.Principal{}, errors.New("connection refused")
			}
			return actor.Principal{ID: ids.Zero}, nil
		}),
	})
	require.NoError(t, err)
	srv.Handle(getApp, http.HandlerFunc(echo))
	env.Server = srv

	r := httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil)
	r.Header.Set("Authorization", "Bearer broken")
	httpservertest.RequireProblem(t, env.Do(r), errs.CodeInternal, "")

	r = httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil)
	r.Header.Set("Authorization", "Bearer nobody")
	httpservertest.RequireProblem(t, env.Do(r), errs.CodeUnauthorized, "")
}
