package webhookverify_test

import (
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"bothy/libraries/go/webhookverify"
)

// events is the receiver's own handler behind the middleware: it records
// the body and the delivery it was given.
type events struct {
	calls    int
	body     string
	delivery webhookverify.Delivery
	found    bool
}

func (e *events) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.calls++
	b, _ := io.ReadAll(r.Body)
	e.body = string(b)
	e.delivery, e.found = webhookverify.FromContext(r.Context())
	w.WriteHeader(http.StatusNoContent)
}

func TestMiddlewareAnswersByTheOutcome(t *testing.T) {
	t.Parallel()
	now := time.Unix(1796032800, 0)
	body := `{"id":"019ad4a0-7c00-7000-8000-000000000001","type":"message.created"}`
	keys := webhookverify.StaticKeys{{ID: "kid-1", PublicKey: signer(1).Public().(ed25519.PublicKey)}}
	v, err := webhookverify.New(webhookverify.Options{Keys: keys, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	unavailable, err := webhookverify.New(webhookverify.Options{Keys: webhookverify.StaticKeys{}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		v       *webhookverify.Verifier
		header  http.Header
		body    string
		maxBody int64
		status  int
		want    error
	}{
		{"a verified delivery", v, sign(now, body, signer(1)), body, 0, http.StatusNoContent, nil},
		{"a changed body", v, sign(now, body, signer(1)), body + " ", 0, http.StatusUnauthorized, webhookverify.ErrNoMatchingSignature},
		{"another signer", v, sign(now, body, signer(2)), body, 0, http.StatusUnauthorized, webhookverify.ErrNoMatchingSignature},
		{"a stale timestamp", v, sign(now.Add(-time.Hour), body, signer(1)), body, 0, http.StatusUnauthorized, webhookverify.ErrTimestampOutOfTolerance},
		{"no headers", v, http.Header{}, body, 0, http.StatusBadRequest, webhookverify.ErrMissingHeader},
		{"a body over the limit", v, sign(now, body, signer(1)), body, 16, http.StatusRequestEntityTooLarge, webhookverify.ErrBodyTooLarge},
		{"no keys", unavailable, sign(now, body, signer(1)), body, 0, http.StatusServiceUnavailable, webhookverify.ErrKeysUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			next := &events{}
			var got error
			h := &webhookverify.Handler{Verifier: tc.v, Next: next, MaxBodyBytes: tc.maxBody}
			if tc.want != nil {
				h.OnError = func(w http.ResponseWriter, _ *http.Request, err error) {
					got = err
					w.WriteHeader(webhookverify.StatusCode(err))
				}
			}
			r := httptest.NewRequest(http.MethodPost, "/bothy/events", strings.NewReader(tc.body))
			r.Header = tc.header
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			if tc.want != nil {
				if !errors.Is(got, tc.want) || next.calls != 0 {
					t.Fatalf("error %v (want %v), handler called %d times", got, tc.want, next.calls)
				}
				return
			}
			if next.calls != 1 || next.body != tc.body || !next.found || next.delivery.KeyID != "kid-1" ||
				next.delivery.Scheme != webhookverify.SchemeV1A {
				t.Fatalf("handler saw %+v", next)
			}
		})
	}
}

func TestMiddlewareDefaultAnswerNamesNoDetail(t *testing.T) {
	t.Parallel()
	v, err := webhookverify.New(webhookverify.Options{Keys: webhookverify.StaticKeys{{PublicKey: signer(1).Public().(ed25519.PublicKey)}}})
	if err != nil {
		t.Fatal(err)
	}
	next := &events{}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/bothy/events", strings.NewReader("{}"))
	r.Header = sign(time.Now(), "{}", signer(2))
	v.Middleware(next).ServeHTTP(rec, r)
	if rec.Code != http.StatusUnauthorized || next.calls != 0 {
		t.Fatalf("status %d, handler called %d times", rec.Code, next.calls)
	}
	if got := strings.TrimSpace(rec.Body.String()); got != http.StatusText(http.StatusUnauthorized) {
		t.Fatalf("answer %q", got)
	}
}
