package otel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/otel/oteltest"
)

// capture returns a logger at level and a function that parses what it wrote,
// one JSON object per line.
func capture(t *testing.T, level slog.Level) (*slog.Logger, func() []map[string]any) {
	t.Helper()
	logs := oteltest.NewLogs(t, level)
	return logs.Logger(), func() []map[string]any { return logs.Lines(t) }
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestLogHandlerKeepsAllowedAndDropsOtherKeys(t *testing.T) {
	t.Parallel()
	log, lines := capture(t, slog.LevelInfo)
	log.Info("webhook delivery failed",
		slog.String(string(attr.ServerAddress), "hooks.example.com"),
		slog.Int(string(attr.HTTPResponseStatusCode), 503),
		slog.String("url", "https://hooks.example.com/path?token=Alex"),
		slog.String("body", `{"text":"hello Sam"}`),
		slog.String("password", "hunter2"),
		slog.String("error", "dial tcp 10.0.0.1:443: refused"),
		slog.Group("request", slog.String("path", "/private")),
	)
	got := lines()
	require.Len(t, got, 1)
	require.ElementsMatch(t, []string{"time", "level", "msg", "server.address", "http.response.status_code"}, keys(got[0]))
	require.Equal(t, "webhook delivery failed", got[0]["msg"])
	require.Equal(t, "INFO", got[0]["level"])
	require.Equal(t, "hooks.example.com", got[0]["server.address"])
	require.EqualValues(t, 503, got[0]["http.response.status_code"])
}

func TestLogHandlerNeverPrintsErrorText(t *testing.T) {
	t.Parallel()
	secret := errors.New("POST https://hooks.example.com/hook?token=Robin failed")
	tests := []struct {
		name string
		attr slog.Attr
		want string
	}{
		{"an error under error.type becomes its type", slog.Any(string(attr.ErrorType), fmt.Errorf("sending: %w", secret)), "_OTHER"},
		{"an error under another allowed key becomes its type", slog.Any(string(attr.Reason), secret), "_OTHER"},
		{"a typed bothy error becomes its code and reason", slog.Any(string(attr.ErrorType), errs.Conflict("event_expired")), "conflict/event_expired"},
		{"ErrorAttr gives the same rule", otel.ErrorAttr(fmt.Errorf("x: %w", context.DeadlineExceeded)), "deadline_exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log, lines := capture(t, slog.LevelInfo)
			log.Warn("job failed", tc.attr)
			got := lines()
			require.Len(t, got, 1)
			require.Equal(t, tc.want, got[0][tc.attr.Key])
			raw, _ := json.Marshal(got[0])
			require.NotContains(t, string(raw), "hooks.example.com")
			require.NotContains(t, string(raw), "Robin")
		})
	}
}

func TestLogHandlerFiltersWithAttrsAndGroups(t *testing.T) {
	t.Parallel()
	log, lines := capture(t, slog.LevelInfo)
	scoped := log.With(string(attr.Role), "worker", "query", "select secret")
	scoped.Info("consumer round finished", string(attr.Consumer), "webhooks", slog.Group("", slog.String(string(attr.Count), "3"), slog.String("token", "t")))
	log.WithGroup("http").Info("request served", string(attr.HTTPRoute), "/api/v1/spaces")
	log.Info("user supplied ids", "trace_id", "forged", "span_id", "forged")

	got := lines()
	require.Len(t, got, 3)
	require.ElementsMatch(t, []string{"time", "level", "msg", "bothy.role", "bothy.consumer", "bothy.count"}, keys(got[0]))
	require.ElementsMatch(t, []string{"time", "level", "msg"}, keys(got[1]), "attributes inside a group are dropped")
	require.ElementsMatch(t, []string{"time", "level", "msg"}, keys(got[2]), "callers cannot set trace_id or span_id")
}

type secretValuer struct{}

func (secretValuer) LogValue() slog.Value { return slog.StringValue("resolved") }

type groupValuer struct{}

func (groupValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("body", "content of Sam"))
}

func TestLogHandlerResolvesValuers(t *testing.T) {
	t.Parallel()
	log, lines := capture(t, slog.LevelInfo)
	log.Info("resolved", slog.Any(string(attr.Reason), secretValuer{}), slog.Any(string(attr.Outcome), groupValuer{}))
	got := lines()
	require.Len(t, got, 1)
	require.Equal(t, "resolved", got[0]["bothy.reason"])
	require.NotContains(t, got[0], "bothy.outcome", "an allowed key with a group value is dropped")
}

func TestLogHandlerLevel(t *testing.T) {
	t.Parallel()
	log, lines := capture(t, slog.LevelWarn)
	log.Info("not shown")
	log.Debug("not shown")
	log.Warn("shown")
	log.Error("shown too")
	got := lines()
	require.Len(t, got, 2)
	require.Equal(t, "WARN", got[0]["level"])
	require.Equal(t, "ERROR", got[1]["level"])
}

func TestLogHandlerAddsTraceContext(t *testing.T) {
	t.Parallel()
	log, lines := capture(t, slog.LevelInfo)
	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled,
	}))
	log.InfoContext(ctx, "with span")
	log.InfoContext(context.Background(), "without span")
	got := lines()
	require.Len(t, got, 2)
	require.Equal(t, tid.String(), got[0]["trace_id"])
	require.Equal(t, sid.String(), got[0]["span_id"])
	require.NotContains(t, got[1], "trace_id")
}

func TestAllowedLogKeys(t *testing.T) {
	t.Parallel()
	allowed := otel.AllowedLogKeys()
	for _, k := range attr.All() {
		require.Contains(t, allowed, string(k))
	}
	require.Subset(t, allowed, []string{slog.TimeKey, slog.LevelKey, slog.MessageKey, "trace_id", "span_id"})
	require.Len(t, allowed, len(attr.All())+5, "nothing else is allowed")
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want slog.Level
		ok   bool
	}{
		{"debug", slog.LevelDebug, true},
		{"info", slog.LevelInfo, true},
		{"warn", slog.LevelWarn, true},
		{"error", slog.LevelError, true},
		{"INFO", slog.LevelInfo, true},
		{"", 0, false},
		{"verbose", 0, false},
		{"info+2", 0, false},
	}
	for _, tc := range tests {
		t.Run("log.level "+tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := otel.ParseLevel(tc.in)
			if !tc.ok {
				require.Error(t, err)
				require.Contains(t, err.Error(), "log.level", "the message names the key, never the value")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
