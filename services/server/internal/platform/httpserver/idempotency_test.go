package httpserver_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg"
)

var createSubscription = httpserver.Route{
	Operation: "createWebhookSubscription", Method: http.MethodPost, Pattern: "/api/v1/apps/{appId}/webhook-subscriptions",
	Idempotent: true,
}

const subscriptionsPath = "/api/v1/apps/0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a41/webhook-subscriptions"

// secretOf is the one-time secret the test use case returns for a request
// body; it never repeats between bodies.
func secretOf(body string) string {
	return "whsec_" + hex.EncodeToString([]byte("Robin's secret for "+body))
}

// subscriptions is a use case in the shape of createWebhookSubscription: one
// unit of work that writes a row, then answers 201 with a Location. A body
// containing "hmac" returns a one-time secret; "invalid" fails validation
// after the write; the first "deadlock" run fails with a deadlock.
type subscriptions struct {
	env       *httpservertest.Env
	runs      atomic.Int32
	deadlocks atomic.Int32
	started   chan struct{}
	release   chan struct{}
}

func newSubscriptions(t *testing.T, env *httpservertest.Env) *subscriptions {
	t.Helper()
	_, err := env.DB.Owner.Exec(context.Background(), `CREATE TABLE subscriptions (body text); GRANT SELECT, INSERT ON subscriptions TO bothy_app`)
	require.NoError(t, err)
	s := &subscriptions{env: env}
	env.Server.Handle(createSubscription, s)
	return s
}

func (s *subscriptions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.runs.Add(1)
	var in struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		s.env.Server.WriteError(w, r, err)
		return
	}
	if s.started != nil {
		close(s.started)
		<-s.release
	}
	var secret string
	err := s.env.UnitOfWork.Do(r.Context(), func(ctx context.Context) error {
		if _, err := pg.Conn(ctx, s.env.DB.App).Exec(ctx, `INSERT INTO subscriptions VALUES ($1)`, in.Name); err != nil {
			return err
		}
		switch {
		case strings.Contains(in.Name, "deadlock") && s.deadlocks.Add(1) == 1:
			return &pgconn.PgError{Code: "40P01"}
		case strings.Contains(in.Name, "invalid"):
			return errs.Validation(errs.Field("/name", "invalid"))
		case strings.Contains(in.Name, "hmac"):
			secret = secretOf(in.Name)
			idempotency.MarkOneTimeSecret(ctx)
		}
		return nil
	})
	if err != nil {
		s.env.Server.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", "/api/v1/webhook-subscriptions/1")
	w.Header().Set("X-Not-Stored", "yes")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]string{"name": in.Name, "hmac_secret": secret})
}

func (s *subscriptions) rows(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, s.env.DB.App.QueryRow(context.Background(), `SELECT count(*) FROM subscriptions`).Scan(&n))
	return n
}

func post(t *testing.T, env *httpservertest.Env, as actor.Principal, key, body string) *http.Response {
	t.Helper()
	r := httpservertest.NewRequest(t, "POST", subscriptionsPath, body)
	r.Header.Set("Content-Type", "application/json")
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	if !as.Anonymous() {
		env.Auth.As(r, as)
	}
	return env.Do(r)
}

func TestIdempotentReplayReturnsTheStoredResponse(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)

	first := post(t, env, robin, "key-1", `{"name":"tracker"}`)
	require.Equal(t, http.StatusCreated, first.StatusCode)
	require.Empty(t, first.Header.Get("Idempotent-Replay"))
	require.Equal(t, "yes", first.Header.Get("X-Not-Stored"), "the first answer carries every header")
	firstBody := body(t, first)

	replay := post(t, env, robin, "key-1", `{"name":"tracker"}`)
	require.Equal(t, http.StatusCreated, replay.StatusCode)
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replay"))
	require.Equal(t, "application/json", replay.Header.Get("Content-Type"))
	require.Equal(t, "/api/v1/webhook-subscriptions/1", replay.Header.Get("Location"))
	require.Empty(t, replay.Header.Get("X-Not-Stored"), "only the stored subset is replayed")
	require.NotEqual(t, first.Header.Get("X-Request-Id"), replay.Header.Get("X-Request-Id"))
	require.Equal(t, firstBody, body(t, replay))

	require.Equal(t, int32(1), subs.runs.Load())
	require.Equal(t, 1, subs.rows(t))
}

func TestTheSameKeyWithAnotherBodyAnswers409Reuse(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	require.Equal(t, http.StatusCreated, post(t, env, robin, "key-1", `{"name":"tracker"}`).StatusCode)

	resp := post(t, env, robin, "key-1", `{"name":"another"}`)
	httpservertest.RequireProblem(t, resp, errs.CodeIdempotencyKeyReuse, "")

	r := httpservertest.NewRequest(t, "POST", strings.Replace(subscriptionsPath, "8a41", "8a42", 1), `{"name":"tracker"}`)
	r.Header.Set("Idempotency-Key", "key-1")
	env.Auth.As(r, robin)
	httpservertest.RequireProblem(t, env.Do(r), errs.CodeIdempotencyKeyReuse, "")
	require.Equal(t, int32(1), subs.runs.Load(), "the path is part of the request")
}

func TestAConcurrentDuplicateAnswers409InProgress(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	subs.started, subs.release = make(chan struct{}), make(chan struct{})

	done := make(chan *http.Response)
	go func() { done <- post(t, env, robin, "key-1", `{"name":"tracker"}`) }()
	<-subs.started

	resp := post(t, env, robin, "key-1", `{"name":"tracker"}`)
	httpservertest.RequireProblem(t, resp, errs.CodeConflict, idempotency.ReasonInProgress)

	close(subs.release)
	require.Equal(t, http.StatusCreated, (<-done).StatusCode)
	require.Equal(t, "true", post(t, env, robin, "key-1", `{"name":"tracker"}`).Header.Get("Idempotent-Replay"))
	require.Equal(t, 1, subs.rows(t))
}

func TestAOneTimeSecretIsShownOnceAndNeverStored(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	reqBody := `{"name":"tracker-hmac"}`
	secret := secretOf("tracker-hmac")

	first := post(t, env, robin, "key-1", reqBody)
	require.Equal(t, http.StatusCreated, first.StatusCode)
	require.Contains(t, body(t, first), secret)

	replay := post(t, env, robin, "key-1", reqBody)
	httpservertest.RequireProblem(t, replay, errs.CodeConflict, idempotency.ReasonOneTimeSecret)
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replay"))
	require.Equal(t, int32(1), subs.runs.Load())

	var status int
	var oneTime, bodyNull bool
	require.NoError(t, env.DB.App.QueryRow(context.Background(),
		`SELECT status, one_time_secret, body IS NULL FROM idempotency_keys`).Scan(&status, &oneTime, &bodyNull))
	require.Equal(t, http.StatusCreated, status)
	require.True(t, oneTime)
	require.True(t, bodyNull)

	httpservertest.RequireSecretAbsent(t, env.DB.App, secret, "idempotency_keys")
	require.NotContains(t, env.Logs.String(), secret)
}

func TestPrincipalsDoNotShareKeys(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	a := post(t, env, alex, "shared-key", `{"name":"alex"}`)
	s := post(t, env, sam, "shared-key", `{"name":"sam"}`)
	require.Equal(t, http.StatusCreated, a.StatusCode)
	require.Equal(t, http.StatusCreated, s.StatusCode)
	require.Empty(t, s.Header.Get("Idempotent-Replay"))
	require.Equal(t, int32(2), subs.runs.Load())

	replay := post(t, env, sam, "shared-key", `{"name":"sam"}`)
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replay"))
	require.Contains(t, body(t, replay), `"name":"sam"`)
}

func TestAFailureIsNotStoredAndItsWritesRollBack(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)

	resp := post(t, env, robin, "key-1", `{"name":"invalid"}`)
	httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/name")
	require.Zero(t, subs.rows(t), "the write before the failure rolled back")

	resp = post(t, env, robin, "key-1", `{"name":"invalid"}`)
	httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/name")
	require.Empty(t, resp.Header.Get("Idempotent-Replay"), "a failure runs again")
	require.Equal(t, int32(2), subs.runs.Load())

	httpservertest.RequireProblem(t, post(t, env, robin, "key-1", `{"name":"fixed"}`), errs.CodeIdempotencyKeyReuse, "")
}

func TestADeadlockInsideTheHandlerRunsTheRequestAgain(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	resp := post(t, env, robin, "key-1", `{"name":"deadlock"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "the client never sees the first run")
	require.Equal(t, int32(2), subs.runs.Load())
	require.Equal(t, 1, subs.rows(t))
	require.Contains(t, env.Logs.String(), `"error.type":"pg_40P01"`)
}

func TestRequestsWithoutAKeyOrPrincipalAreNotIdempotent(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	require.Equal(t, http.StatusCreated, post(t, env, robin, "", `{"name":"a"}`).StatusCode)
	require.Equal(t, http.StatusCreated, post(t, env, robin, "", `{"name":"a"}`).StatusCode)
	anon := post(t, env, actor.Principal{}, "key-1", `{"name":"b"}`)
	require.Equal(t, http.StatusCreated, anon.StatusCode)
	require.Equal(t, http.StatusCreated, post(t, env, actor.Principal{}, "key-1", `{"name":"b"}`).StatusCode)
	require.Equal(t, int32(4), subs.runs.Load())

	var keys int
	require.NoError(t, env.DB.App.QueryRow(context.Background(), `SELECT count(*) FROM idempotency_keys`).Scan(&keys))
	require.Zero(t, keys)
}

func TestSafeMethodsIgnoreTheKey(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(echo))
	r := env.Auth.As(httpservertest.NewRequest(t, "GET", "/api/v1/apps/a", nil), robin)
	r.Header.Set("Idempotency-Key", "not valid but ignored")
	require.Equal(t, http.StatusOK, env.Do(r).StatusCode)
}

// TestAKeyOnAnOperationWithoutIdempotencyAnswers400: an operation whose
// contract does not declare Idempotency-Key (a test send, which sends a
// request at once and cannot run in the stage's transaction) refuses the
// header before its handler runs, instead of being run inside a
// transaction it must not be in.
func TestAKeyOnAnOperationWithoutIdempotencyAnswers400(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	var ran atomic.Bool
	env.Server.Handle(httpserver.Route{Operation: "sendWebhookTest", Method: http.MethodPost, Pattern: "/api/v1/tests"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran.Store(true) }))
	r := httpservertest.NewRequest(t, "POST", "/api/v1/tests", nil)
	r.Header.Set("Idempotency-Key", "key-1")
	httpservertest.RequireProblem(t, env.Do(env.Auth.As(r, robin)), errs.CodeValidationFailed,
		httpserver.ReasonIdempotencyNotSupported, "header/Idempotency-Key")
	require.False(t, ran.Load())

	r = httpservertest.NewRequest(t, "POST", "/api/v1/tests", nil)
	require.Equal(t, http.StatusOK, env.Do(env.Auth.As(r, robin)).StatusCode, "without the key it runs")
	require.True(t, ran.Load())
}

func TestMalformedKeysAnswer400(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	for _, key := range []string{"with space", strings.Repeat("k", 256), "schlüssel"} {
		resp := post(t, env, robin, key, `{"name":"x"}`)
		p := httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, httpserver.ReasonIdempotencyKeyInvalid, "header/Idempotency-Key")
		require.Equal(t, "invalid", p.Errors[0].Code)
	}
	r := httpservertest.NewRequest(t, "POST", subscriptionsPath, `{"name":"x"}`)
	r.Header.Add("Idempotency-Key", "a")
	r.Header.Add("Idempotency-Key", "b")
	p := httpservertest.RequireProblem(t, env.Do(env.Auth.As(r, robin)), errs.CodeValidationFailed, httpserver.ReasonIdempotencyKeyInvalid, "header/Idempotency-Key")
	require.Equal(t, "repeated", p.Errors[0].Code)
	require.Zero(t, subs.runs.Load())
}

func TestAnIdempotentBodyOverTheLimitAnswers413(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	big := `{"name":"` + strings.Repeat("x", int(httpservertest.Options().MaxBodyBytes)) + `"}`
	r := httpservertest.NewRequest(t, "POST", subscriptionsPath, strings.NewReader(big))
	r.ContentLength = -1
	r.Header.Set("Idempotency-Key", "key-1")
	httpservertest.RequireProblem(t, env.Do(env.Auth.As(r, robin)), errs.CodePayloadTooLarge, "")
	require.Zero(t, subs.runs.Load())
}

func TestAKeyExpiresAfterItsTTL(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	subs := newSubscriptions(t, env)
	require.Equal(t, http.StatusCreated, post(t, env, robin, "key-1", `{"name":"one"}`).StatusCode)
	env.Clock.Advance(httpservertest.KeyTTL + time.Second)
	resp := post(t, env, robin, "key-1", `{"name":"two"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Idempotent-Replay"))
	require.Equal(t, int32(2), subs.runs.Load())
}

func TestAPanickingIdempotentRequestCanBeRetried(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	var runs atomic.Int32
	env.Server.Handle(createSubscription, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			panic("first run fails")
		}
		w.WriteHeader(http.StatusCreated)
	}))
	httpservertest.RequireProblem(t, post(t, env, robin, "key-1", `{}`), errs.CodeInternal, "")
	resp := post(t, env, robin, "key-1", `{}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "the key was released by the rollback")
	require.Empty(t, resp.Header.Get("Idempotent-Replay"))
	require.Equal(t, "true", post(t, env, robin, "key-1", `{}`).Header.Get("Idempotent-Replay"))
}
