package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

// server is the api role of one process, driven over HTTP.
type server struct {
	t testing.TB
	h http.Handler
}

// newAPIServer assembles a process of role api like `bothy serve` on db
// and does what Run does at start that a request needs: the signing keys
// (a webhook subscription records the active key), the event log
// partitions and the owner Robin.
func newAPIServer(t testing.TB, db *pgtest.DB) server {
	t.Helper()
	cfg := harness.LoadConfig(t, db, nil)
	p, err := wire.NewProcess(context.Background(), cfg, wire.RoleAPI, wire.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.NoError(t, p.Modules().Instance.Ensure(context.Background()))
	harness.CreatePartitions(t, db, cfg, p.Modules().Clock.Now())
	harness.CreateOwner(t, db, cfg, p.Modules())
	return server{t: t, h: p.Handler()}
}

// call sends method path (below /api/v1) with a JSON body and the bearer
// token (none when empty), expects status want and returns the decoded
// body (nil for an empty one).
func (s server) call(token, method, path string, body any, want int) map[string]any {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(s.t, err)
		rd = bytes.NewReader(raw)
	}
	r := httptest.NewRequest(method, "/api/v1"+path, rd)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	require.Equal(s.t, want, rec.Code, "%s %s: %s", method, path, rec.Body.String())
	if rec.Body.Len() == 0 {
		return nil
	}
	var m map[string]any
	require.NoError(s.t, json.Unmarshal(rec.Body.Bytes(), &m))
	return m
}

// TestAcceptanceAnAppPostsThroughTheAPI is the acceptance of the apps
// platform (issue 5): in a process of role api assembled like `bothy serve`,
// an owner registers and installs an app, grants it a channel, and the app
// posts a message there with its token; a member without the grant sees
// 404 for the app.
func TestAcceptanceAnAppPostsThroughTheAPI(t *testing.T) {
	t.Parallel()
	s := newAPIServer(t, pgtest.New(t))
	robin := s.call("", "POST", "/sessions", map[string]any{"email": "robin@example.com", "password": harness.Password}, http.StatusCreated)["token"].(string)
	s.call(robin, "POST", "/people", map[string]any{"email": "alex@example.com", "display_name": "Alex", "password": harness.Password}, http.StatusCreated)
	alex := s.call("", "POST", "/sessions", map[string]any{"email": "alex@example.com", "password": harness.Password}, http.StatusCreated)["token"].(string)

	support := s.call(robin, "POST", "/spaces", map[string]any{"name": "Support"}, http.StatusCreated)["id"].(string)
	eskalation := s.call(robin, "POST", "/spaces/"+support+"/channels", map[string]any{"name": "Eskalation"}, http.StatusCreated)["id"].(string)

	manifest := harness.TrackerManifest()
	app := s.call(robin, "POST", "/apps", map[string]any{"manifest": map[string]any{
		"name": manifest.Name, "scopes": manifest.Scopes, "events": manifest.Events,
		"delivery": map[string]any{"mode": "webhook", "events_url": manifest.Delivery.EventsURL},
	}}, http.StatusCreated)["id"].(string)
	installed := s.call(robin, "POST", "/apps/"+app+"/installation", map[string]any{"scopes": manifest.Scopes}, http.StatusCreated)
	tracker := installed["app_token"].(string)

	s.call(tracker, "POST", "/channels/"+eskalation+"/messages", map[string]any{"text": "Ticket for Sam"}, http.StatusNotFound)
	s.call(robin, "POST", "/apps/"+app+"/grants", map[string]any{"space_id": support, "channel_id": eskalation, "level": "write"}, http.StatusCreated)
	posted := s.call(tracker, "POST", "/channels/"+eskalation+"/messages", map[string]any{"text": "Ticket for Sam"}, http.StatusCreated)
	require.Equal(t, installed["installation"].(map[string]any)["principal_id"], posted["author_id"])

	s.call(alex, "GET", "/apps/"+app, nil, http.StatusNotFound)
	s.call(robin, "POST", "/apps/"+app+"/installation/suspend", nil, http.StatusOK)
	s.call(tracker, "POST", "/channels/"+eskalation+"/messages", map[string]any{"text": "Ticket for Sam"}, http.StatusForbidden)
	s.call(robin, "DELETE", "/apps/"+app+"/installation", nil, http.StatusNoContent)
	s.call(tracker, "POST", "/channels/"+eskalation+"/messages", map[string]any{"text": "Ticket for Sam"}, http.StatusUnauthorized)
}
