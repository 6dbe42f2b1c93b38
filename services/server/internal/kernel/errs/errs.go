// Package errs defines the typed errors that cross module boundaries. Each
// carries a problem code (the "code" of an RFC 9457 problem document), an
// optional reason and field errors with JSON pointers. Use cases return them;
// the HTTP layer maps a Code to a status in exactly one table
// (platform/httpserver); jobs decide retries from them.
//
// Messages are constant English phrases chosen by the caller. They must never
// contain user input, secrets, URLs or message text: an error string can end
// up in a log line.
package errs

import (
	"errors"
	"fmt"
)

// Code is a problem code of docs/spec/06-api.md section 5.
type Code string

// The problem codes. The HTTP status of each is fixed in platform/httpserver.
const (
	// CodeValidationFailed: the request is malformed; Fields name the parts.
	CodeValidationFailed Code = "validation_failed"
	// CodeWebhookHostNotAllowed: a webhook address names a host or port
	// outside webhook.allowed_hosts.
	CodeWebhookHostNotAllowed Code = "webhook_host_not_allowed"
	// CodeCursorInvalid: a pagination cursor is foreign, stale or tampered.
	CodeCursorInvalid Code = "cursor_invalid"
	// CodeUnauthorized: no valid credentials.
	CodeUnauthorized Code = "unauthorized"
	// CodeStepUpRequired: the action needs a fresh step-up.
	CodeStepUpRequired Code = "step_up_required"
	// CodeForbidden: the resource is visible but the action is denied; Reason
	// names the rule (scope_missing, app_not_installed, ...).
	CodeForbidden Code = "forbidden"
	// CodeNotFound: unknown or invisible; both answer the same.
	CodeNotFound Code = "not_found"
	// CodeConflict: the state of the resource forbids the change; Reason says
	// which state.
	CodeConflict Code = "conflict"
	// CodeIdempotencyKeyReuse: an Idempotency-Key came back with another body.
	CodeIdempotencyKeyReuse Code = "idempotency_key_reuse"
	// CodePayloadTooLarge: the request body exceeds its configured limit.
	CodePayloadTooLarge Code = "payload_too_large"
	// CodeUnsupportedMediaType: the request body has a content coding other
	// than identity; the server decodes none (415).
	CodeUnsupportedMediaType Code = "unsupported_media_type"
	// CodeRateLimited: a rate limit class is exhausted.
	CodeRateLimited Code = "rate_limited"
	// CodeUnavailable: the database cannot be reached right now (connection
	// refused, administrator shutdown, failover); the client retries after
	// Retry-After (503). Never a client mistake, never a fault of the code.
	CodeUnavailable Code = "unavailable"
	// CodeInternal: a server fault. Never used for client mistakes.
	CodeInternal Code = "internal"
)

// FieldError points at one defect of a request.
type FieldError struct {
	// Pointer is the JSON pointer (RFC 6901) of the defective member, for
	// example "/url" or "/event_types/2".
	Pointer string `json:"pointer"`
	// Code is a stable machine-readable item code such as "required",
	// "not_granted" or "hmac_not_enabled".
	Code string `json:"code"`
	// Detail is an optional constant English explanation.
	Detail string `json:"detail,omitempty"`
}

// Error is the typed error of bothy. Compare with errors.As or CodeOf, never
// by message.
type Error struct {
	// Code is the problem code.
	Code Code
	// Reason refines Code, for example "one_time_secret" for CodeConflict.
	Reason string
	// Fields lists request defects; only for CodeValidationFailed and
	// CodeWebhookHostNotAllowed.
	Fields []FieldError
	msg    string
	cause  error
}

// Error returns "code[/reason]: message", never any input value.
func (e *Error) Error() string {
	s := string(e.Code)
	if e.Reason != "" {
		s += "/" + e.Reason
	}
	if e.msg != "" {
		s += ": " + e.msg
	}
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

// Unwrap returns the cause given to Wrap.
func (e *Error) Unwrap() error { return e.cause }

// New returns an error of code with a constant message.
func New(code Code, msg string) *Error { return &Error{Code: code, msg: msg} }

// WithReason returns an error of code and reason with a constant message.
func WithReason(code Code, reason, msg string) *Error {
	return &Error{Code: code, Reason: reason, msg: msg}
}

// Wrap returns an internal error that keeps cause for logs and errors.Is.
// Use it only for server faults; the cause must not carry secrets.
func Wrap(cause error, msg string) *Error {
	return &Error{Code: CodeInternal, msg: msg, cause: cause}
}

// Validation returns a validation_failed error listing fields.
func Validation(fields ...FieldError) *Error {
	return &Error{Code: CodeValidationFailed, Fields: fields, msg: "request is invalid"}
}

// Field is shorthand for a FieldError without detail.
func Field(pointer, code string) FieldError { return FieldError{Pointer: pointer, Code: code} }

// NotFound returns the not_found error. It has no detail on purpose: an
// invisible resource must answer exactly like an unknown one.
func NotFound() *Error { return &Error{Code: CodeNotFound, msg: "resource not found"} }

// Conflict returns a conflict error with reason.
func Conflict(reason string) *Error {
	return &Error{Code: CodeConflict, Reason: reason, msg: "state conflict"}
}

// Forbidden returns a forbidden error with reason.
func Forbidden(reason string) *Error {
	return &Error{Code: CodeForbidden, Reason: reason, msg: "action not allowed"}
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// CodeOf returns the code of the *Error in err's chain, CodeInternal for any
// other non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	if e, ok := As(err); ok {
		return e.Code
	}
	return CodeInternal
}

// ReasonOf returns the reason of the *Error in err's chain, or "".
func ReasonOf(err error) string {
	if e, ok := As(err); ok {
		return e.Reason
	}
	return ""
}

// Internalf returns an internal error with a formatted message. Arguments must
// be identifiers or counts, never input values or secrets.
func Internalf(format string, args ...any) *Error {
	return &Error{Code: CodeInternal, msg: fmt.Sprintf(format, args...)}
}
