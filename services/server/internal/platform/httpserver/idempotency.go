package httpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"strconv"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
)

const (
	idempotencyKeyHeader = "Idempotency-Key"
	// ReplayHeader marks a response that was not produced by running the
	// request now but by an earlier request with the same key.
	ReplayHeader = "Idempotent-Replay"
	// ReasonIdempotencyKeyInvalid is the validation_failed reason of a
	// malformed Idempotency-Key header.
	ReasonIdempotencyKeyInvalid = "idempotency_key_invalid"
	// ReasonIdempotencyNotSupported is the validation_failed reason of an
	// Idempotency-Key on an operation whose contract does not declare it
	// (Route.Idempotent).
	ReasonIdempotencyNotSupported = "idempotency_not_supported"
)

// keyNotSupported is the problem of an Idempotency-Key on a route that is
// not Idempotent.
func keyNotSupported() *errs.Error {
	e := errs.WithReason(errs.CodeValidationFailed, ReasonIdempotencyNotSupported, "this operation takes no Idempotency-Key")
	e.Fields = []errs.FieldError{{Pointer: "header/" + idempotencyKeyHeader, Code: "not_supported",
		Detail: "This operation declares no Idempotency-Key; send the request without it."}}
	return e
}

// storedHeaders are the response headers a replay repeats; the others
// (Date, X-Request-Id, CORS) belong to the request that answers.
var storedHeaders = []string{"Content-Type", "Location", "ETag", "Last-Modified", "Cache-Control"}

// serveIdempotent runs an unsafe request that carries an Idempotency-Key
// (docs/spec/06-api.md 7) through the idempotency Store:
//
//   - the header must be one value of 1 to 255 visible ASCII characters,
//     else 400 validation_failed with reason idempotency_key_invalid;
//   - keys belong to the authenticated principal and the route's operation;
//     an anonymous request is served without idempotency, because there is
//     nobody to bind the key to (and nobody else may replay its response);
//   - the request hash covers method, path, query and body;
//   - the first request runs with its response buffered, and its
//     successful response is stored in the handler's transaction (see
//     idempotencypg); a replay repeats status, storedHeaders and body with
//     Idempotent-Replay: true; another body with the same key answers 409
//     idempotency_key_reuse; a duplicate while the first runs answers 409
//     conflict with reason in_progress at once (it does not wait);
//   - a response marked with idempotency.MarkOneTimeSecret is sent once and
//     stored without body; its replay answers 409 conflict with reason
//     one_time_secret and Idempotent-Replay: true.
func (s *Server) serveIdempotent(w http.ResponseWriter, r *http.Request, rt Route, h http.Handler) {
	keys := r.Header.Values(idempotencyKeyHeader)
	if len(keys) != 1 || !idempotency.ValidKey(keys[0]) {
		// The item points at the header like the request validator's
		// parameter items do (services/server/api README).
		item := errs.FieldError{Pointer: "header/" + idempotencyKeyHeader, Code: "invalid",
			Detail: "The Idempotency-Key must be 1 to 255 visible ASCII characters."}
		if len(keys) > 1 {
			item = errs.FieldError{Pointer: item.Pointer, Code: "repeated", Detail: "This parameter takes one value and was given several."}
		}
		e := errs.WithReason(errs.CodeValidationFailed, ReasonIdempotencyKeyInvalid, "Idempotency-Key header is invalid")
		e.Fields = []errs.FieldError{item}
		s.WriteError(w, r, e)
		return
	}
	p := actor.From(r.Context())
	if p.Anonymous() || p.ID.IsZero() {
		h.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.WriteError(w, r, errs.Wrap(err, "request body unreadable"))
		return
	}
	req := idempotency.Request{Principal: p.ID, Operation: rt.Operation, Key: keys[0], Hash: requestHash(r, body)}

	var last *bufferedResponse
	res, err := s.idem.Do(r.Context(), req, func(ctx context.Context) (idempotency.Response, error) {
		sink := &errSink{}
		attempt := r.WithContext(context.WithValue(ctx, errSinkKey{}, sink))
		attempt.Body = io.NopCloser(bytes.NewReader(body))
		last = newBufferedResponse()
		h.ServeHTTP(last, attempt)
		return last.stored(), sink.err
	})
	switch {
	case err != nil:
		s.WriteError(w, r, err)
	case res.Replayed && res.OneTimeSecret:
		w.Header().Set(ReplayHeader, "true")
		s.WriteError(w, r, errs.Conflict(idempotency.ReasonOneTimeSecret))
	case res.Replayed:
		for k, v := range res.Response.Header {
			w.Header()[k] = v
		}
		w.Header().Set(ReplayHeader, "true")
		w.WriteHeader(res.Response.Status)
		_, _ = w.Write(res.Response.Body)
	case last == nil:
		// A store that reports a fresh result without running fn is broken.
		s.WriteError(w, r, errs.Internalf("idempotency store returned no response"))
	default:
		last.sendTo(w)
	}
}

// requestHash identifies the request under its key: method, escaped path,
// raw query and body, separated so that no part can pose as another.
func requestHash(r *http.Request, body []byte) [32]byte {
	h := sha256.New()
	for _, part := range []string{r.Method, r.URL.EscapedPath(), r.URL.RawQuery} {
		h.Write([]byte(strconv.Itoa(len(part))))
		h.Write([]byte{':'})
		h.Write([]byte(part))
	}
	h.Write(body)
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// bufferedResponse holds a handler's response until the store has decided
// (and committed) it, so nothing reaches the client before its writes are
// durable, and a run that is repeated after a deadlock leaves no trace.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedResponse() *bufferedResponse { return &bufferedResponse{header: http.Header{}} }

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// stored returns the response as the store keeps it: status, storedHeaders
// and body.
func (b *bufferedResponse) stored() idempotency.Response {
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	h := map[string][]string{}
	for _, k := range storedHeaders {
		if v := b.header.Values(k); len(v) > 0 {
			h[k] = v
		}
	}
	return idempotency.Response{Status: status, Header: h, Body: b.body.Bytes()}
}

// sendTo writes the whole buffered response (every header) to w.
func (b *bufferedResponse) sendTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.body.Bytes())
}
