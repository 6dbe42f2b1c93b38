package otel

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/otel/attr"
)

// Keys that the log handler itself writes. Callers cannot set them: a
// caller's trace_id or span_id is dropped like any other unknown key.
const (
	// TraceIDKey carries the trace ID of the span in the record's context.
	TraceIDKey = "trace_id"
	// SpanIDKey carries the span ID of the span in the record's context.
	SpanIDKey = "span_id"
)

// callerKeys is the allow list for attributes that callers pass: exactly the
// keys of package attr.
var callerKeys = func() map[string]struct{} {
	m := make(map[string]struct{}, len(attr.All()))
	for _, k := range attr.All() {
		m[string(k)] = struct{}{}
	}
	return m
}()

// NewLogHandler returns the JSON handler for the process logs. It writes one
// JSON object per record to w and drops every record below level (log.level).
//
// Attributes pass an allow list, the keys of package attr: any other key is
// dropped, not renamed, so that a careless call cannot leak a URL, a body or
// a secret under a key of its own. Groups are not part of the log format:
// attributes inside a group (slog.Group with a name, Logger.WithGroup) are
// dropped; groups without a name are flattened. A value that is an error is
// never printed: it is replaced by errs.Class, because error text may carry
// input of unknown origin. When the context carries a valid span, the
// handler adds trace_id and span_id.
func NewLogHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return &handler{inner: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})}
}

// NewLogger returns a logger over NewLogHandler(w, level).
func NewLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(NewLogHandler(w, level))
}

// ErrorAttr returns the attribute error.type with errs.Class(err), the one
// classifier of errors (D-CL-10): the way to log an error.
func ErrorAttr(err error) slog.Attr {
	return slog.String(string(attr.ErrorType), errs.Class(err))
}

// ParseLevel parses log.level: debug, info, warn or error, in any case. The
// error names the key, never the value.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, errors.New("otel: log.level must be debug, info, warn or error")
}

type handler struct {
	inner slog.Handler
	// grouped is set once WithGroup was called: every later attribute would
	// be qualified by the group, so none of them is on the allow list.
	grouped bool
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	if !h.grouped {
		r.Attrs(func(a slog.Attr) bool {
			out.AddAttrs(allowed(nil, a)...)
			return true
		})
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		out.AddAttrs(slog.String(TraceIDKey, sc.TraceID().String()), slog.String(SpanIDKey, sc.SpanID().String()))
	}
	return h.inner.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	if h.grouped {
		return h
	}
	var kept []slog.Attr
	for _, a := range as {
		kept = allowed(kept, a)
	}
	return &handler{inner: h.inner.WithAttrs(kept)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{inner: h.inner, grouped: true}
}

// allowed appends a to dst when its key is on the allow list, with errors
// replaced by their type; a group without a name is flattened.
func allowed(dst []slog.Attr, a slog.Attr) []slog.Attr {
	if a.Key == "" {
		v := a.Value.Resolve()
		if v.Kind() == slog.KindGroup {
			for _, g := range v.Group() {
				dst = allowed(dst, g)
			}
		}
		return dst
	}
	if _, ok := callerKeys[a.Key]; !ok {
		return dst
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		return dst
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			v = slog.StringValue(errs.Class(err))
		}
	}
	return append(dst, slog.Attr{Key: a.Key, Value: v})
}
