package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/kernel/correlation"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
)

// ProblemTypeBase is the prefix of every problem type URI: the type of code
// c is ProblemTypeBase + c. The URI identifies the problem; clients compare
// it (or the code member) and never dereference it. It is absolute, as
// RFC 9457 3.1.1 recommends, and the same on every installation.
const ProblemTypeBase = "https://bothy.example.com/problems/"

// ProblemContentType is the media type of problem documents (RFC 9457).
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem document with bothy's extension members.
type Problem struct {
	// Type is ProblemTypeBase followed by Code.
	Type string `json:"type"`
	// Title is a constant English summary of Code.
	Title string `json:"title"`
	// Status is the HTTP status, from the table of StatusOf.
	Status int `json:"status"`
	// Code is the problem code.
	Code errs.Code `json:"code"`
	// Reason refines Code, for example one_time_secret for conflict.
	Reason string `json:"reason,omitempty"`
	// Errors points at defects of the request (validation_failed,
	// webhook_host_not_allowed).
	Errors []errs.FieldError `json:"errors,omitempty"`
	// RequestID is the ID of the request (also in the X-Request-Id header).
	RequestID string `json:"request_id,omitempty"`
	// StepUp names the operation that renews a step-up; only in
	// step_up_required problems, so a client learns from the answer itself
	// where to go (docs/spec/06-api.md 5).
	StepUp *ProblemLink `json:"step_up,omitempty"`
}

// ProblemLink names the operation of the contract that resolves a problem.
type ProblemLink struct {
	// OperationID is the operationId in api/openapi.yaml.
	OperationID string `json:"operation_id"`
	// Method is the HTTP method of the operation.
	Method string `json:"method"`
	// Href is the path of the operation, absolute on this server.
	Href string `json:"href"`
}

// stepUpLink is the operation that renews the step-up of a session
// (stepUpSession in api/openapi.yaml).
var stepUpLink = ProblemLink{OperationID: "stepUpSession", Method: http.MethodPost, Href: "/api/v1/sessions/current/step-up"}

type problemSpec struct {
	status int
	title  string
}

// problems is the one table that maps problem codes to HTTP statuses
// (docs/spec/06-api.md 5). A code missing here is answered as internal.
var problems = map[errs.Code]problemSpec{
	errs.CodeValidationFailed:      {http.StatusBadRequest, "The request is invalid"},
	errs.CodeWebhookHostNotAllowed: {http.StatusBadRequest, "The webhook host is not allowed"},
	errs.CodeCursorInvalid:         {http.StatusBadRequest, "The cursor is invalid"},
	errs.CodeUnauthorized:          {http.StatusUnauthorized, "Authentication is required"},
	errs.CodeStepUpRequired:        {http.StatusUnauthorized, "A fresh step-up is required"},
	errs.CodeForbidden:             {http.StatusForbidden, "The action is not allowed"},
	errs.CodeNotFound:              {http.StatusNotFound, "The resource was not found"},
	errs.CodeConflict:              {http.StatusConflict, "The resource is in a conflicting state"},
	errs.CodeIdempotencyKeyReuse:   {http.StatusConflict, "The idempotency key was used with another request"},
	errs.CodePayloadTooLarge:       {http.StatusRequestEntityTooLarge, "The request body is too large"},
	errs.CodeUnsupportedMediaType:  {http.StatusUnsupportedMediaType, "The content coding is not supported"},
	errs.CodeRateLimited:           {http.StatusTooManyRequests, "Too many requests"},
	errs.CodeUnavailable:           {http.StatusServiceUnavailable, "The service is unavailable, retry later"},
	errs.CodeInternal:              {http.StatusInternalServerError, "Internal server error"},
}

// StatusOf returns the HTTP status of code, and 500 for a code outside the
// table.
func StatusOf(code errs.Code) int {
	if p, ok := problems[code]; ok {
		return p.status
	}
	return http.StatusInternalServerError
}

// ProblemOf returns the problem document for err, without request ID, and
// whether err is a server fault (internal, or a code outside the table).
// A fault document carries no reason, no errors and nothing of err's text;
// a not_found document carries no reason and no errors either, because an
// invisible resource must answer exactly like an unknown one.
func ProblemOf(err error) (Problem, bool) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return problemFor(errs.CodePayloadTooLarge, "", nil), false
	}
	e, ok := errs.As(err)
	if !ok {
		return problemFor(errs.CodeInternal, "", nil), true
	}
	if _, known := problems[e.Code]; !known || e.Code == errs.CodeInternal {
		return problemFor(errs.CodeInternal, "", nil), true
	}
	if e.Code == errs.CodeNotFound {
		return problemFor(errs.CodeNotFound, "", nil), false
	}
	return problemFor(e.Code, e.Reason, e.Fields), false
}

func problemFor(code errs.Code, reason string, fields []errs.FieldError) Problem {
	spec := problems[code]
	p := Problem{
		Type:   ProblemTypeBase + string(code),
		Title:  spec.title,
		Status: spec.status,
		Code:   code,
		Reason: reason,
		Errors: fields,
	}
	if code == errs.CodeStepUpRequired {
		link := stepUpLink
		p.StepUp = &link
	}
	return p
}

// WriteError answers the request with the problem document of err. Server
// faults are logged at error level with the request ID, the route and
// error.type (errs.Class: the class of the innermost cause), never with the error's
// text, which may carry input. It is the error handler for the generated
// strict server (request and response errors alike).
func (s *Server) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	if sink, ok := ctx.Value(errSinkKey{}).(*errSink); ok {
		sink.err = err
	}
	p, fault := ProblemOf(err)
	if fault && s.unavailable != nil && s.unavailable(err) {
		// An outage of the database is no fault of the request or the
		// code: the client may retry, and the same request may succeed.
		p, fault = problemFor(errs.CodeUnavailable, "", nil), false
	}
	if p.Code == errs.CodeUnavailable {
		s.countOutage(w, r, err)
	}
	if fault {
		s.log.LogAttrs(ctx, slog.LevelError, "request failed",
			otel.ErrorAttr(err),
			slog.String(string(attr.RequestID), correlation.From(ctx)),
			slog.String(string(attr.HTTPRoute), routeOf(ctx)))
	}
	writeProblem(ctx, w, p)
}

// countOutage prepares an unavailable answer: Retry-After from
// http.unavailable_retry_after, the reason for the access log, the counter
// bothy.http.unavailable, and one warning with error.type only.
func (s *Server) countOutage(w http.ResponseWriter, r *http.Request, err error) {
	ctx := r.Context()
	w.Header().Set("Retry-After", s.retryAfter)
	if st, ok := ctx.Value(stateKey{}).(*reqState); ok {
		st.reason = string(errs.CodeUnavailable)
	}
	s.outages.Add(ctx, 1, metric.WithAttributes(attr.HTTPRoute.String(routeOf(ctx))))
	s.log.LogAttrs(ctx, slog.LevelWarn, "database unavailable",
		otel.ErrorAttr(err),
		slog.String(string(attr.RequestID), correlation.From(ctx)),
		slog.String(string(attr.HTTPRoute), routeOf(ctx)))
}

// writeProblem writes p with the request ID of ctx. A 401 carries the
// WWW-Authenticate challenge of RFC 6750 (and of RFC 9470 for step-up).
func writeProblem(ctx context.Context, w http.ResponseWriter, p Problem) {
	p.RequestID = correlation.From(ctx)
	h := w.Header()
	h.Set("Content-Type", ProblemContentType)
	h.Set("Cache-Control", "no-store")
	switch p.Code {
	case errs.CodeUnauthorized:
		h.Set("WWW-Authenticate", `Bearer`)
	case errs.CodeStepUpRequired:
		h.Set("WWW-Authenticate", `Bearer error="insufficient_user_authentication"`)
	}
	body, err := json.Marshal(p)
	if err != nil {
		// A Problem holds only strings, numbers and a struct of strings;
		// this cannot happen.
		panic("httpserver: problem does not encode")
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}
