package oteltest_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/otel/oteltest"
)

func TestSpansRecordsEndedSpans(t *testing.T) {
	t.Parallel()
	spans := oteltest.NewSpans(t)
	tr := spans.Provider.Tracer("test")
	ctx, parent := tr.Start(context.Background(), "jobs.work")
	_, child := tr.Start(ctx, "webhook.deliver")
	child.SetAttributes(attr.ServerAddress.String("hooks.example.com"), attr.Outcome.String("succeeded"))
	child.End()
	parent.End()

	require.Len(t, spans.Ended(), 2)
	got := spans.Named("webhook.deliver")
	require.Len(t, got, 1)
	a := oteltest.Attrs(got[0])
	require.Equal(t, "hooks.example.com", a[attr.ServerAddress].AsString())
	require.Equal(t, "succeeded", a[attr.Outcome].AsString())
	require.Equal(t, parent.SpanContext().SpanID(), got[0].Parent().SpanID())
}

func TestMetricsAppliesTheProductionAttributeRules(t *testing.T) {
	t.Parallel()
	metrics := oteltest.NewMetrics(t)
	meter := metrics.Provider.Meter("test")
	c, err := meter.Int64Counter("bothy.egress.blocked")
	require.NoError(t, err)
	h, err := meter.Float64Histogram("bothy.test.duration", metric.WithUnit("s"))
	require.NoError(t, err)
	ctx := context.Background()
	c.Add(ctx, 1, metric.WithAttributes(attr.Reason.String("address_blocked"), attr.WebhookSubscriptionID.String("0190b6a2-7c4e-7b1a-9c3e-6f1d2a3b4c5d")))
	c.Add(ctx, 2, metric.WithAttributes(attr.Reason.String("host_not_allowed"), attribute.String("url.full", "https://hooks.example.com/x")))
	h.Record(ctx, 0.25, metric.WithAttributes(attr.JobKind.String("apps.webhook_deliver")))

	require.EqualValues(t, 3, metrics.Sum(t, "bothy.egress.blocked"))
	require.EqualValues(t, 1, metrics.Sum(t, "bothy.egress.blocked", attr.Reason.String("address_blocked")))
	require.EqualValues(t, 0, metrics.Sum(t, "bothy.egress.blocked", attr.Reason.String("other")))
	require.EqualValues(t, 0, metrics.Sum(t, "bothy.not.recorded"))
	require.ElementsMatch(t, []attribute.Key{attr.Reason}, metrics.AttributeKeys(t, "bothy.egress.blocked"),
		"the subscription id and keys outside package attr never reach a metric")
	require.EqualValues(t, 1, metrics.HistogramCount(t, "bothy.test.duration", attr.JobKind.String("apps.webhook_deliver")))
}

func TestLogsCapturesProductionFormat(t *testing.T) {
	t.Parallel()
	logs := oteltest.NewLogs(t, slog.LevelInfo)
	logs.Logger().Info("webhook delivery failed", string(attr.Reason), "timeout", "url", "https://hooks.example.com/x")
	logs.Logger().Warn("job failed", otel.ErrorAttr(errors.New("secret text")))
	logs.Logger().Debug("hidden")

	require.Len(t, logs.Lines(t), 2)
	got := logs.WithMessage(t, "webhook delivery failed")
	require.Len(t, got, 1)
	require.Equal(t, "timeout", got[0]["bothy.reason"])
	require.NotContains(t, got[0], "url")
	require.Equal(t, "_OTHER", logs.WithMessage(t, "job failed")[0]["error.type"])
}
