package otel

import (
	"log/slog"

	"bothy/server/internal/platform/otel/attr"
)

// AllowedLogKeys returns every key a log line may contain: slog's time,
// level and msg, the handler's trace_id and span_id, and the keys of package
// attr (docs/observability/signals.md section 7). The handler filters with
// callerKeys and writes its own keys itself; only the tests need the whole
// list, to check a line against it, so it lives in a test file (D-CL-16).
func AllowedLogKeys() []string {
	out := []string{slog.TimeKey, slog.LevelKey, slog.MessageKey, TraceIDKey, SpanIDKey}
	for _, k := range attr.All() {
		out = append(out, string(k))
	}
	return out
}
