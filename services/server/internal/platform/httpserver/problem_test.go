package httpserver_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
)

func TestStatusTableCoversEveryCode(t *testing.T) {
	t.Parallel()
	for code, status := range map[errs.Code]int{
		errs.CodeValidationFailed:      400,
		errs.CodeWebhookHostNotAllowed: 400,
		errs.CodeCursorInvalid:         400,
		errs.CodeUnauthorized:          401,
		errs.CodeStepUpRequired:        401,
		errs.CodeForbidden:             403,
		errs.CodeNotFound:              404,
		errs.CodeConflict:              409,
		errs.CodeIdempotencyKeyReuse:   409,
		errs.CodePayloadTooLarge:       413,
		errs.CodeRateLimited:           429,
		errs.CodeInternal:              500,
	} {
		require.Equal(t, status, httpserver.StatusOf(code), code)
		p, fault := httpserver.ProblemOf(errs.New(code, "constant"))
		require.Equal(t, status, p.Status, code)
		require.Equal(t, code, p.Code)
		require.Equal(t, "https://bothy.example.com/problems/"+string(code), p.Type)
		require.NotEmpty(t, p.Title)
		require.Equal(t, code == errs.CodeInternal, fault)
	}
	require.Equal(t, 500, httpserver.StatusOf("no_such_code"))
}

func TestProblemOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		err   error
		want  httpserver.Problem
		fault bool
	}{
		{
			name: "a validation error keeps its pointers",
			err: errs.Validation(errs.Field("/url", "invalid"),
				errs.FieldError{Pointer: "/event_types/2", Code: "not_granted", Detail: "the event type is not granted"}),
			want: httpserver.Problem{Code: errs.CodeValidationFailed, Errors: []errs.FieldError{
				{Pointer: "/url", Code: "invalid"},
				{Pointer: "/event_types/2", Code: "not_granted", Detail: "the event type is not granted"},
			}},
		},
		{name: "a conflict keeps its reason", err: errs.Conflict("one_time_secret"), want: httpserver.Problem{Code: errs.CodeConflict, Reason: "one_time_secret"}},
		{name: "a wrapped errs.Error is found", err: fmt.Errorf("create: %w", errs.Forbidden("scope_missing")), want: httpserver.Problem{Code: errs.CodeForbidden, Reason: "scope_missing"}},
		{name: "not_found never tells why", err: errs.WithReason(errs.CodeNotFound, "not_self", "hidden"), want: httpserver.Problem{Code: errs.CodeNotFound}},
		{name: "a plain error is internal", err: errors.New("pq: password=hunter2"), want: httpserver.Problem{Code: errs.CodeInternal}, fault: true},
		{name: "an internal error hides its reason", err: errs.WithReason(errs.CodeInternal, "disk_full", "x"), want: httpserver.Problem{Code: errs.CodeInternal}, fault: true},
		{name: "an unknown code is internal", err: errs.New("teapot", "x"), want: httpserver.Problem{Code: errs.CodeInternal}, fault: true},
		{name: "a body over the limit is payload_too_large", err: fmt.Errorf("decode: %w", &http.MaxBytesError{Limit: 10}), want: httpserver.Problem{Code: errs.CodePayloadTooLarge}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, fault := httpserver.ProblemOf(tc.err)
			require.Equal(t, tc.fault, fault)
			require.Equal(t, tc.want.Code, p.Code)
			require.Equal(t, tc.want.Reason, p.Reason)
			require.Equal(t, tc.want.Errors, p.Errors)
			require.Equal(t, httpserver.StatusOf(tc.want.Code), p.Status)
		})
	}
}

func TestWriteErrorAnswersAProblemDocument(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Server.Handle(httpserver.Route{Operation: "createWebhookSubscription", Method: "POST", Pattern: "/api/v1/apps/{appId}/webhook-subscriptions"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			env.Server.WriteError(w, r, errs.Validation(errs.Field("/url", "scheme_not_https"), errs.Field("/event_types/0", "not_granted")))
		}))
	resp := env.Do(httpservertest.NewRequest(t, "POST", "/api/v1/apps/0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a99/webhook-subscriptions", "{}"))
	p := httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/url", "/event_types/0")
	require.Equal(t, "scheme_not_https", p.Errors[0].Code)
	require.NotEmpty(t, p.RequestID)
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.Empty(t, resp.Header.Get("WWW-Authenticate"))
}

func TestInternalErrorsAreLoggedByTypeOnly(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	secret := "whsec_EXAMPLEcdGhlIHNlY3JldCBvZiBSb2Jpbg=="
	env.Server.Handle(getApp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env.Server.WriteError(w, r, errs.Wrap(fmt.Errorf("query failed near %q: %w", secret, errDriver{}), "loading the app"))
	}))
	resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a99", nil))
	p := httpservertest.RequireProblem(t, resp, errs.CodeInternal, "")
	require.Empty(t, p.Errors)

	logs := env.Logs.String()
	require.NotContains(t, logs, secret)
	require.NotContains(t, logs, "loading the app")
	var fault map[string]any
	for _, rec := range env.Logs.Records(t) {
		if rec["msg"] == "request failed" {
			fault = rec
		}
	}
	require.NotNil(t, fault, "the fault is logged")
	require.Equal(t, "ERROR", fault["level"])
	require.Equal(t, "httpserver_test.errDriver", fault["error.type"])
	require.Equal(t, p.RequestID, fault["bothy.request_id"])
	require.Equal(t, getApp.Pattern, fault["http.route"])
}

type errDriver struct{}

func (errDriver) Error() string { return "driver: connection reset" }

// unauthorizedEnv serves getApp with step_up_required for /apps/stale and
// unauthorized for any other app.
func unauthorizedEnv(t *testing.T) *httpservertest.Env {
	t.Helper()
	env := newEnv(t)
	env.Server.Handle(getApp, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "stale") {
			env.Server.WriteError(w, r, errs.New(errs.CodeStepUpRequired, "step-up"))
			return
		}
		env.Server.WriteError(w, r, errs.New(errs.CodeUnauthorized, "authentication required"))
	}))
	return env
}

func TestUnauthorizedProblemsCarryTheBearerChallenge(t *testing.T) {
	t.Parallel()
	env := unauthorizedEnv(t)
	resp := env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/x", nil))
	httpservertest.RequireProblem(t, resp, errs.CodeUnauthorized, "")
	require.Equal(t, "Bearer", resp.Header.Get("WWW-Authenticate"))
	resp = env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/stale", nil))
	httpservertest.RequireProblem(t, resp, errs.CodeStepUpRequired, "")
	require.Equal(t, `Bearer error="insufficient_user_authentication"`, resp.Header.Get("WWW-Authenticate"))
}

func TestStepUpRequiredProblemNamesTheStepUpOperation(t *testing.T) {
	t.Parallel()
	env := unauthorizedEnv(t)
	decode := func(resp *http.Response) map[string]any {
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return body
	}

	stale := decode(env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/stale", nil)))
	require.Equal(t, map[string]any{
		"operation_id": "stepUpSession",
		"method":       "POST",
		"href":         "/api/v1/sessions/current/step-up",
	}, stale["step_up"], "the problem names the operation that renews the step-up")

	unauthorized := decode(env.Do(httpservertest.NewRequest(t, "GET", "/api/v1/apps/x", nil)))
	require.NotContains(t, unauthorized, "step_up", "only step_up_required names it")
}
