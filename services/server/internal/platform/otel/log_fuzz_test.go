package otel_test

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/oteltest"
)

// FuzzLogHandler logs one attribute of any key and value, as a string, as an
// error and inside WithAttrs, and checks the properties of the handler: every
// line is one JSON object, and no line has a key outside AllowedLogKeys.
func FuzzLogHandler(f *testing.F) {
	// An allowed key with a host: kept.
	f.Add("server.address", "hooks.example.com")
	// An unknown key with a URL: dropped.
	f.Add("url", "https://hooks.example.com/path?token=Alex")
	// A handler-owned key set by a caller: dropped.
	f.Add("trace_id", "0af7651916cd43dd8448eb211c80319c")
	// A key that only differs in case from an allowed one: dropped.
	f.Add("Server.Address", "hooks.example.com")
	// An empty key.
	f.Add("", "value of Sam")
	// Quotes, newlines and invalid UTF-8 in key and value.
	f.Add("bothy.reason\n\"x\"", "\xff\xfe\"}\n{\"injected\":1")
	f.Fuzz(func(t *testing.T, key, value string) {
		allowed := map[string]bool{}
		for _, k := range otel.AllowedLogKeys() {
			allowed[k] = true
		}
		logs := oteltest.NewLogs(t, slog.LevelDebug)
		log := logs.Logger()
		log.Info("fuzz string", slog.String(key, value))
		log.Info("fuzz error", slog.Any(key, errors.New(value)))
		log.With(key, value).Info("fuzz with")
		log.Info("fuzz group", slog.Group("", slog.String(key, value)))

		lines := logs.Lines(t) // fails unless every line is one JSON object
		require.Len(t, lines, 4)
		for _, line := range lines {
			for k := range line {
				require.True(t, allowed[k], "key %q is not allowed", k)
			}
		}
		if value != "" && value != "_OTHER" && allowed[key] && key != "trace_id" && key != "span_id" {
			require.NotEqual(t, value, lines[1][key], "an error value is never written as its text")
		}
	})
}
