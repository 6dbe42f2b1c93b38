package harness_test

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

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

// BenchmarkPostMessageThroughTheAPI measures one postMessage as the api
// role serves it: the whole handler chain of a process assembled like
// `bothy serve --role api` (authentication, request validation, the
// strict handler, the use case and its two round trips to a real
// PostgreSQL, the response), one request at a time, with a text of 1,000
// bytes as the end-to-end benchmark posts. Run it with -benchmem (or
// -memprofile) to see what a post allocates in the api, which its garbage
// collector pays for.
func BenchmarkPostMessageThroughTheAPI(b *testing.B) {
	db := pgtest.New(b)
	cfg := harness.LoadConfig(b, db, nil)
	p, err := wire.NewProcess(context.Background(), cfg, wire.RoleAPI, wire.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(b, err)
	require.NoError(b, p.Modules().Instance.Ensure(context.Background()))
	harness.CreatePartitions(b, db, cfg, p.Modules().Clock.Now())
	harness.CreateOwner(b, db, cfg, p.Modules())
	h := p.Handler()

	call := func(token, path string, body any) map[string]any {
		raw, err := json.Marshal(body)
		require.NoError(b, err)
		r := httptest.NewRequest(http.MethodPost, "/api/v1"+path, bytes.NewReader(raw))
		r.Header.Set("Content-Type", "application/json")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		require.Less(b, rec.Code, 300, "POST %s: %s", path, rec.Body.String())
		var m map[string]any
		require.NoError(b, json.Unmarshal(rec.Body.Bytes(), &m))
		return m
	}
	robin := call("", "/sessions", map[string]any{"email": "robin@example.com", "password": harness.Password})["token"].(string)
	space := call(robin, "/spaces", map[string]any{"name": "Support"})["id"].(string)
	channel := call(robin, "/spaces/"+space+"/channels", map[string]any{"name": "Eskalation"})["id"].(string)

	body, err := json.Marshal(map[string]any{"text": strings.Repeat("Alex asks Sam. ", 67)[:1000]})
	require.NoError(b, err)
	path := "/api/v1/channels/" + channel + "/messages"
	auth := "Bearer " + robin
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusCreated {
			b.Fatalf("postMessage answered %d: %s", rec.Code, rec.Body.String())
		}
	}
}
