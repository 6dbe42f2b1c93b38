package harness_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/pg/pgtest"
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
	s := newAPIServer(b, pgtest.New(b))
	robin := s.call("", "POST", "/sessions", map[string]any{"email": "robin@example.com", "password": harness.Password}, http.StatusCreated)["token"].(string)
	space := s.call(robin, "POST", "/spaces", map[string]any{"name": "Support"}, http.StatusCreated)["id"].(string)
	channel := s.call(robin, "POST", "/spaces/"+space+"/channels", map[string]any{"name": "Eskalation"}, http.StatusCreated)["id"].(string)

	body, err := json.Marshal(map[string]any{"text": strings.Repeat("Alex asks Sam. ", 67)[:1000]})
	require.NoError(b, err)
	path := "/api/v1/channels/" + channel + "/messages"
	auth := "Bearer " + robin
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, r)
		if rec.Code != http.StatusCreated {
			b.Fatalf("postMessage answered %d: %s", rec.Code, rec.Body.String())
		}
	}
}
