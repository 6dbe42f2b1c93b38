package webhookverify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// DefaultMaxBodyBytes is the largest body a Handler reads when its
// MaxBodyBytes is 0. A bothy delivery is one event envelope, whose text
// the server bounds (sync.payload_text_max_bytes), far below it.
const DefaultMaxBodyBytes = 1 << 20

// Handler is an http.Handler that verifies every request before Next sees
// it: it reads the body (at most MaxBodyBytes), verifies it with
// Verifier.Verify and the request's context, and then calls Next with the
// body restored and the Delivery in the context (FromContext). A request
// that does not verify never reaches Next: OnError answers it.
//
// Verifier.Middleware returns a Handler with the defaults. Handler does not
// drop duplicates (the same webhook-id again, docs/api/webhooks.md section
// 5): Next does, by Delivery.ID.
type Handler struct {
	// Verifier checks the requests. Required.
	Verifier *Verifier
	// Next handles the verified requests. Required.
	Next http.Handler
	// MaxBodyBytes is the largest body read; a larger one is refused with
	// ErrBodyTooLarge. 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// OnError answers a request that did not verify; err wraps one of the
	// package's errors, or is the error of reading the body (a client that
	// went away). nil means an answer with StatusCode(err) and its
	// status text, which tells the sender nothing more.
	OnError func(w http.ResponseWriter, r *http.Request, err error)
}

// Middleware returns a Handler with v and next and the default limit and
// answers.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return &Handler{Verifier: v, Next: next}
}

// ServeHTTP verifies r and passes it on to h.Next, or answers it with
// h.OnError.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	limit := h.MaxBodyBytes
	if limit <= 0 {
		limit = DefaultMaxBodyBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			err = fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, limit)
		}
		h.fail(w, r, err)
		return
	}
	d, err := h.Verifier.Verify(r.Context(), r.Header, body)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), deliveryKey{}, d))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	h.Next.ServeHTTP(w, r)
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if h.OnError != nil {
		h.OnError(w, r, err)
		return
	}
	code := StatusCode(err)
	http.Error(w, http.StatusText(code), code)
}

// deliveryKey is the context key of the verified Delivery.
type deliveryKey struct{}

// FromContext returns the Delivery a Handler verified, and false for a
// context of a request that did not pass a Handler.
func FromContext(ctx context.Context) (Delivery, bool) {
	d, ok := ctx.Value(deliveryKey{}).(Delivery)
	return d, ok
}
