package httpserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/otel/attr"
)

type stateKey struct{}

// reqState is what the chain learns about a request while it runs.
type reqState struct {
	// route is the template of the matched route; "" when none matched.
	route string
	// reason is the bothy.reason of the access log line: "unavailable"
	// when the database could not be reached; "" otherwise.
	reason string
}

type errSinkKey struct{}

// errSink receives the error WriteError answered with, so the idempotency
// stage can tell a deadlock (run again) from other failures.
type errSink struct{ err error }

// statusWriter remembers the status for the access log and whether the
// header went out (a panic after it cannot answer a problem any more).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// accessLog writes one line per request. It logs the route template, never
// r.URL: the path holds identifiers and the query may hold anything.
func (s *Server) accessLog(r *http.Request, w *statusWriter, st *reqState, start time.Time) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs := []slog.Attr{
		slog.String(string(attr.HTTPRequestMethod), methodOf(r)),
		slog.Int(string(attr.HTTPResponseStatusCode), status),
		slog.Int64(string(attr.Duration), time.Since(start).Milliseconds()),
		slog.String(string(attr.RequestID), correlation.From(r.Context())),
	}
	if st.route != "" {
		attrs = append(attrs, slog.String(string(attr.HTTPRoute), st.route))
	}
	if st.reason != "" {
		attrs = append(attrs, slog.String(string(attr.Reason), st.reason))
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "http request", attrs...)
}

// methodOf returns the method for telemetry: a known method, or _OTHER (as
// OpenTelemetry's HTTP conventions do), because the method is client input.
func methodOf(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return r.Method
	}
	return "_OTHER"
}

// recoverPanic turns a panic into a 500 problem (when the header has not
// gone out yet) and logs its type only: a panic value may carry input.
// http.ErrAbortHandler keeps its meaning and is panicked again.
func (s *Server) recoverPanic(r *http.Request, w *statusWriter) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	ctx := r.Context()
	s.log.LogAttrs(ctx, slog.LevelError, "panic recovered",
		slog.String(string(attr.ErrorType), fmt.Sprintf("panic:%T", p)),
		slog.String(string(attr.RequestID), correlation.From(ctx)),
		slog.String(string(attr.HTTPRoute), routeOf(ctx)))
	if w.status == 0 {
		// Headers the handler set before it panicked (Location, ETag, ...)
		// describe a response that never happened.
		h := w.Header()
		cors := h.Get("Access-Control-Allow-Origin")
		clear(h)
		h.Set("X-Request-Id", correlation.From(ctx))
		if cors != "" {
			h.Set("Access-Control-Allow-Origin", cors)
		}
		writeProblem(ctx, w, problemFor(errs.CodeInternal, "", nil))
	}
}
