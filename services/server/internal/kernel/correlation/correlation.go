// Package correlation carries the correlation ID of the work a context
// belongs to: the request ID that the HTTP chain gives every request, or the
// ID of the job a worker runs. Audit entries and log records copy it, so one
// request or job can be followed through every row and line it produced.
package correlation

import "context"

// MaxLen is the longest correlation ID: a UUID (36 characters) or "job:"
// followed by a 64-bit job ID fit with room to spare.
const MaxLen = 64

type ctxKey struct{}

// With returns ctx carrying id. An ID must be 1 to MaxLen characters of
// [A-Za-z0-9_.:-], because it ends up in log lines and audit rows; an ID
// outside that form is a programming error and is dropped: ctx is returned
// unchanged, so From keeps answering the outer ID, if any.
func With(ctx context.Context, id string) context.Context {
	if !Valid(id) {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the correlation ID of ctx, or "" when there is none.
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Valid reports whether id has the form With accepts.
func Valid(id string) bool {
	if len(id) == 0 || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '.', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}
