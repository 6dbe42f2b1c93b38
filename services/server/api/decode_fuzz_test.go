package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
)

// FuzzDecodeRequest feeds arbitrary request targets and bodies to the
// request validation of the full contract, as a hostile client would
// (issue 12). Properties: it never panics; a request it refuses gets an
// *errs.Error (validation_failed with items that each have a code, a
// constant detail and a pointer that is empty, a JSON pointer or a
// parameter location, or payload_too_large); a request it lets through has
// a body that is exactly one JSON document of valid UTF-8 without NUL
// characters and a query without a bad escape or a repeated
// single-valued parameter.
func FuzzDecodeRequest(f *testing.F) {
	// Seeds: the malformed requests of issue 12, then valid ones.
	const id = "01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e01"
	sub := "/api/v1/webhook-subscriptions/" + id
	for _, seed := range []struct {
		method byte
		target string
		body   string
	}{
		{0, "/api/v1/apps/not-a-uuid/webhook-subscriptions", ""},
		{0, "/api/v1/apps/12345/webhook-subscriptions", ""},
		{0, "/api/v1/apps/%00/webhook-subscriptions", ""},
		{0, "/api/v1/apps/..%2F/webhook-subscriptions", ""},
		{0, "/api/v1/apps/" + id + "%20/webhook-subscriptions", ""},
		{0, "/api/v1/apps/%7B" + id + "%7D/webhook-subscriptions", ""},
		{0, "/api/v1/apps/urn:uuid:" + id + "/webhook-subscriptions", ""},
		{0, "/api/v1/apps/" + strings.ReplaceAll(id, "-", "") + "/webhook-subscriptions", ""},
		{0, "/api/v1/apps/" + strings.Repeat("a", 10000) + "/webhook-subscriptions", ""},
		{0, sub + "/deliveries?limit=abc", ""},
		{0, sub + "/deliveries?limit=1.5", ""},
		{0, sub + "/deliveries?limit=1e3", ""},
		{0, sub + "/deliveries?limit=18446744073709551616", ""},
		{0, sub + "/deliveries?limit=", ""},
		{0, sub + "/deliveries?limit=1&limit=2", ""},
		{0, sub + "/deliveries?status=pending&status=dead", ""},
		{0, sub + "/deliveries?limit=%zz", ""},
		{1, "/api/v1/channels/" + id + "/messages", `{"text":"Hello\u0000Sam"}`},
		{1, "/api/v1/apps/" + id + "/webhook-subscriptions", `{"url":"https://hooks.example.com/a","event_types":["message.created"]}xyz`},
		{1, "/api/v1/apps/" + id + "/webhook-subscriptions", `{"url":"https://hooks.example.com/a","event_types":["message.created"]}{"url":"https://hooks.example.com/a","event_types":["message.created"]}`},
		{1, "/api/v1/apps/" + id + "/webhook-subscriptions", `{"url":"https://hooks.example.com/` + strings.Repeat("a", 5000) + `","event_types":["message.created"]}`},
		{1, "/api/v1/apps/" + id + "/webhook-subscriptions", `{"url":"https://hooks.example.com/\ud800","event_types":["message.created"]}`},
		{2, sub, `{"url":"https://hooks.example.com/a","url":"https://hooks.example.com/b"}`},
		{1, "/api/v1/channels/" + id + "/messages", `{"text":"Hello\u2028Sam \u200f"}`},
		{1, "/api/v1/apps/" + id + "/webhook-subscriptions", validBody},
		{0, sub + "/deliveries?status=pending&limit=10", ""},
		{3, sub, ""},
	} {
		f.Add(seed.method, seed.target, seed.body)
	}
	methods := []string{"GET", "POST", "PATCH", "DELETE"}
	f.Fuzz(func(t *testing.T, m byte, target, body string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(u.Path, "/") {
			return // Go's server answers these before any handler (06-api.md)
		}
		r := &http.Request{Method: methods[int(m)%len(methods)], URL: u, RequestURI: target, Header: http.Header{},
			Body: http.NoBody, Host: "api.example.com", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
		if body != "" {
			r.Body = readCloser{strings.NewReader(body)}
			r.ContentLength = int64(len(body))
			r.Header.Set("Content-Type", "application/json")
		}
		_, o := serve(t, r)
		if !o.reached {
			e, ok := errs.As(o.err)
			require.True(t, ok, "%T", o.err)
			if e.Code == errs.CodePayloadTooLarge {
				return
			}
			require.Equal(t, errs.CodeValidationFailed, e.Code)
			require.NotEmpty(t, e.Fields)
			for _, fe := range e.Fields {
				require.NotEmpty(t, fe.Code)
				require.NotEmpty(t, fe.Detail)
				p := fe.Pointer
				require.True(t, p == "" || p == "query" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "path/") ||
					strings.HasPrefix(p, "query/") || strings.HasPrefix(p, "header/"), p)
			}
			return
		}
		if !knownRoute(r) {
			return // the router answers 404 not_found
		}
		_, err = url.ParseQuery(u.RawQuery)
		require.NoError(t, err, "a bad escape never passes")
		for _, single := range []string{"limit", "cursor", "status"} {
			require.LessOrEqual(t, len(u.Query()[single]), 1, "a repeated %s never passes", single)
		}
		if body != "" {
			require.True(t, utf8.ValidString(body))
			dec := json.NewDecoder(strings.NewReader(body))
			var v any
			require.NoError(t, dec.Decode(&v))
			_, err := dec.Token()
			require.Error(t, err, "nothing after the document")
			require.False(t, holdsNUL(v), "no NUL reaches a handler")
		}
	})
}

// holdsNUL reports whether a decoded JSON value has a NUL character in a
// string or a member name.
func holdsNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) >= 0
	case []any:
		for _, item := range x {
			if holdsNUL(item) {
				return true
			}
		}
	case map[string]any:
		for k, item := range x {
			if strings.IndexByte(k, 0) >= 0 || holdsNUL(item) {
				return true
			}
		}
	}
	return false
}

// contractMux matches the operations of the full contract.
var contractMux = sync.OnceValue(func() *http.ServeMux {
	spec, err := os.ReadFile("../../../api/openapi.yaml")
	if err != nil {
		panic(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			mux.Handle(method+" /api/v1"+path, http.NotFoundHandler())
		}
	}
	return mux
})

// knownRoute reports whether r is a request of an operation of the
// contract (the validator passes any other to the router unchecked).
func knownRoute(r *http.Request) bool {
	_, pattern := contractMux().Handler(r)
	return pattern != ""
}

// readCloser gives a reader a no-op Close for a request body.
type readCloser struct{ *strings.Reader }

// Close does nothing.
func (readCloser) Close() error { return nil }
