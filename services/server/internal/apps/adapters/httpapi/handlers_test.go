package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/apps/adapters/httpapi"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/test/harness"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// appOperations are the operations this package serves.
var appOperations = []string{"createApp", "createAppGrant", "deleteAppGrant", "getApp", "installApp",
	"listAppGrants", "listApps", "resumeApp", "setAppScopes", "suspendApp", "uninstallApp"}

type testBundle struct {
	env   *httpservertest.Env
	world *harness.World
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	db := pgtest.New(t)
	w := harness.BuildMatrixWorld(t, db)
	env := httpservertest.New(t, db, httpservertest.Options())
	h := httpapi.NewHandlers(w.Services.Apps)
	harness.MountAPI(t, env, composed{Handlers: h}, h, appOperations)
	return &testBundle{env: env, world: w}
}

// composed is the strict server of this test: the apps Handlers plus the
// other modules, the way the role assembly embeds the handler sets.
type composed struct {
	*httpapi.Handlers
	harness.OtherModules
}

// do sends method target with body, authenticated as the principal token
// authenticates as now (through the real Authenticator of the world).
func (b *testBundle) do(t *testing.T, token, method, target string, body any, header ...string) *http.Response {
	t.Helper()
	r := httpservertest.NewRequest(t, method, api.BasePath+target, body)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	b.env.Auth.As(r, b.world.Authenticate(t, token))
	return b.env.Do(r)
}

// decode reads a JSON body with status want into a map.
func decode(t *testing.T, resp *http.Response, want int) map[string]any {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, want, resp.StatusCode, "%s", body)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.NotContains(t, string(body), "null", "no JSON null (ADR 0053)")
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	return m
}

var helperManifest = map[string]any{
	"name":   "Helper",
	"scopes": []string{"events:subscribe", "messages:read"},
	"events": []string{"message.created"},
}

func TestAppLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	robin := b.world.Robin.Token

	created := decode(t, b.do(t, robin, "POST", "/apps", map[string]any{"manifest": helperManifest}), http.StatusCreated)
	require.Equal(t, "Helper", created["name"])
	require.Equal(t, map[string]any{
		"name": "Helper", "scopes": []any{"events:subscribe", "messages:read"}, "events": []any{"message.created"},
	}, created["manifest"], "no delivery member for mode none")
	appID := created["id"].(string)

	list := decode(t, b.do(t, robin, "GET", "/apps", nil), http.StatusOK)
	require.Len(t, list["items"], 2)
	got := decode(t, b.do(t, robin, "GET", "/apps/"+appID, nil), http.StatusOK)
	require.Equal(t, created, got)

	key := []string{"Idempotency-Key", "install-helper-1"}
	inst := decode(t, b.do(t, robin, "POST", "/apps/"+appID+"/installation", map[string]any{"scopes": []string{"events:subscribe"}}, key...), http.StatusCreated)
	token := inst["app_token"].(string)
	require.NotEmpty(t, token)
	installation := inst["installation"].(map[string]any)
	require.Equal(t, "active", installation["state"])
	require.Equal(t, []any{"events:subscribe"}, installation["granted_scopes"])
	require.Equal(t, []any{}, installation["event_subscriptions"], "an empty list, never null")
	require.Equal(t, appID, installation["app_id"])

	t.Run("a replay of the install never shows the token again", func(t *testing.T) {
		resp := b.do(t, robin, "POST", "/apps/"+appID+"/installation", map[string]any{"scopes": []string{"events:subscribe"}}, key...)
		httpservertest.RequireProblem(t, resp, errs.CodeConflict, "one_time_secret")
		require.Equal(t, "true", resp.Header.Get(httpserver.ReplayHeader))
		httpservertest.RequireSecretAbsent(t, b.env.DB.App, token, "idempotency_keys", "app_tokens", "audit_events", "event_log")
	})

	t.Run("a second install is already installed", func(t *testing.T) {
		resp := b.do(t, robin, "POST", "/apps/"+appID+"/installation", map[string]any{"scopes": []string{}})
		httpservertest.RequireProblem(t, resp, errs.CodeConflict, "already_installed")
	})

	suspended := decode(t, b.do(t, robin, "POST", "/apps/"+appID+"/installation/suspend", nil), http.StatusOK)
	require.Equal(t, "suspended", suspended["state"])
	resumed := decode(t, b.do(t, robin, "POST", "/apps/"+appID+"/installation/resume", nil), http.StatusOK)
	require.Equal(t, "active", resumed["state"])
	scoped := decode(t, b.do(t, robin, "PUT", "/apps/"+appID+"/installation/scopes",
		map[string]any{"scopes": []string{"messages:read", "events:subscribe"}}), http.StatusOK)
	require.Equal(t, []any{"events:subscribe", "messages:read"}, scoped["granted_scopes"])

	grants := decode(t, b.do(t, robin, "GET", "/apps/"+appID+"/grants", nil), http.StatusOK)
	require.Equal(t, []any{}, grants["items"])
	grant := decode(t, b.do(t, robin, "POST", "/apps/"+appID+"/grants",
		map[string]any{"space_id": b.world.Support.String(), "level": "read"}), http.StatusCreated)
	require.Equal(t, appID, grant["app_id"])
	require.Equal(t, b.world.Support.String(), grant["space_id"])
	require.NotContains(t, grant, "channel_id", "a space-wide grant has no channel")
	grants = decode(t, b.do(t, robin, "GET", "/apps/"+appID+"/grants", nil), http.StatusOK)
	require.Len(t, grants["items"], 1)
	resp := b.do(t, robin, "DELETE", "/apps/"+appID+"/grants/"+grant["id"].(string), nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)

	resp = b.do(t, robin, "DELETE", "/apps/"+appID+"/installation", nil)
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	resp = b.do(t, robin, "DELETE", "/apps/"+appID+"/installation", nil)
	httpservertest.RequireProblem(t, resp, errs.CodeConflict, "app_not_installed")
}

func TestTrackerOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	grants := decode(t, b.do(t, b.world.Robin.Token, "GET", "/apps/"+b.world.Tracker.ID.String()+"/grants", nil), http.StatusOK)
	require.Equal(t, []any{map[string]any{
		"id":         b.world.G6.ID.String(),
		"app_id":     b.world.Tracker.ID.String(),
		"space_id":   b.world.Support.String(),
		"channel_id": b.world.Eskalation.String(),
		"level":      "write",
		"created_at": b.world.G6.CreatedAt.Format(time.RFC3339),
	}}, grants["items"])
	app := decode(t, b.do(t, b.world.Robin.Token, "GET", "/apps/"+b.world.Tracker.ID.String(), nil), http.StatusOK)
	require.Equal(t, map[string]any{"mode": "webhook", "events_url": "https://hooks.example.com/bothy/events"},
		app["manifest"].(map[string]any)["delivery"])
}

// TestInvisibleAppsAnswerLikeUnknownOnes: Alex, Robin's personal token and
// Tracker get the same 404 for Tracker as Robin gets for an unknown ID:
// same status, same body apart from the request ID, same headers.
func TestInvisibleAppsAnswerLikeUnknownOnes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	unknown := b.do(t, b.world.Robin.Token, "GET", "/apps/01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e01", nil)
	want := httpservertest.RequireProblem(t, unknown, errs.CodeNotFound, "")
	for _, token := range []string{b.world.Alex.Token, b.world.RobinPersonalToken, b.world.Tracker.Token} {
		for _, target := range []string{"/apps/" + b.world.Tracker.ID.String(), "/apps/" + b.world.Tracker.ID.String() + "/grants"} {
			resp := b.do(t, token, "GET", target, nil)
			got := httpservertest.RequireProblem(t, resp, errs.CodeNotFound, "")
			got.RequestID = want.RequestID
			require.Equal(t, want, got)
			require.Equal(t, headerNames(unknown.Header), headerNames(resp.Header))
		}
	}
}

func headerNames(h http.Header) []string {
	out := make([]string, 0, len(h))
	for k := range h {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestProblemsOverHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	robin := b.world.Robin.Token

	t.Run("an unknown member of the body is refused by the contract", func(t *testing.T) {
		resp := b.do(t, robin, "POST", "/apps", map[string]any{"manifest": helperManifest, "owner": "Robin"})
		httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/owner")
	})

	t.Run("a manifest address on an unlisted port is webhook_host_not_allowed", func(t *testing.T) {
		m := map[string]any{"name": "Helper", "scopes": []string{}, "delivery": map[string]any{
			"mode": "webhook", "events_url": "https://hooks.example.com:8443/events"}}
		resp := b.do(t, robin, "POST", "/apps", map[string]any{"manifest": m})
		httpservertest.RequireProblem(t, resp, errs.CodeWebhookHostNotAllowed, "", "/manifest/delivery/events_url")
	})

	t.Run("an event the scopes do not allow is a validation failure", func(t *testing.T) {
		m := map[string]any{"name": "Helper", "scopes": []string{"events:subscribe"}, "events": []string{"message.created"}}
		resp := b.do(t, robin, "POST", "/apps", map[string]any{"manifest": m})
		httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/manifest/events/0")
	})

	t.Run("a scope outside the manifest is refused at install", func(t *testing.T) {
		created := decode(t, b.do(t, robin, "POST", "/apps", map[string]any{"manifest": helperManifest}), http.StatusCreated)
		resp := b.do(t, robin, "POST", "/apps/"+created["id"].(string)+"/installation", map[string]any{"scopes": []string{"channels:read"}})
		httpservertest.RequireProblem(t, resp, errs.CodeValidationFailed, "", "/scopes/0")
	})

	t.Run("suspending a suspended app is a conflict", func(t *testing.T) {
		target := "/apps/" + b.world.Tracker.ID.String() + "/installation/suspend"
		require.Equal(t, http.StatusOK, b.do(t, robin, "POST", target, nil).StatusCode)
		httpservertest.RequireProblem(t, b.do(t, robin, "POST", target, nil), errs.CodeConflict, "invalid_state_transition")
	})

	t.Run("a stale step-up is step_up_required", func(t *testing.T) {
		b.world.Clock.Advance(b.world.Services.Config.Identity.StepUpMaxAge + time.Second)
		resp := b.do(t, robin, "DELETE", "/apps/"+b.world.Tracker.ID.String()+"/installation", nil)
		httpservertest.RequireProblem(t, resp, errs.CodeStepUpRequired, "")
		decode(t, b.do(t, robin, "GET", "/apps", nil), http.StatusOK)
	})
}
