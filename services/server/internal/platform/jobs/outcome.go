package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/otel"
	"bothy/server/internal/platform/otel/attr"
)

// The outcomes of one run of a job: the values of bothy.outcome on the job
// metrics and the span job.work.
const (
	// OutcomeCompleted: the handler returned nil.
	OutcomeCompleted = "completed"
	// OutcomeRetried: the handler failed (an error or a panic) and River
	// will run the job again.
	OutcomeRetried = "retried"
	// OutcomeDiscarded: the handler failed on the last attempt.
	OutcomeDiscarded = "discarded"
	// OutcomeSnoozed: the handler returned River's river.JobSnooze.
	OutcomeSnoozed = "snoozed"
	// OutcomeCancelled: the handler returned River's river.JobCancel.
	OutcomeCancelled = "cancelled"
	// OutcomeInterrupted: Stop cancelled the handler after
	// jobs.shutdown_timeout; River makes the job available again without
	// counting the attempt.
	OutcomeInterrupted = "interrupted"
)

// Names of the signals of this package (docs/observability/signals.md).
const (
	// MetricFinished counts finished runs by bothy.job.kind, bothy.queue
	// and bothy.outcome.
	MetricFinished = "bothy.job.finished"
	// MetricDuration is the run time of a handler in seconds by
	// bothy.job.kind and bothy.outcome.
	MetricDuration = "bothy.job.duration"
	// SpanWork is the span around one run of a handler.
	SpanWork = "job.work"
)

// durationBuckets are the histogram boundaries in seconds: from a fast
// database job to the longest job timeouts.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

type telemetry struct {
	tracer   trace.Tracer
	finished metric.Int64Counter
	duration metric.Float64Histogram
}

func newTelemetry(d Deps) (telemetry, error) {
	const scope = "bothy/server/internal/platform/jobs"
	meter := d.Meter.Meter(scope)
	finished, err := meter.Int64Counter(MetricFinished,
		metric.WithUnit("{job}"),
		metric.WithDescription("Finished runs of jobs by kind, queue and outcome."))
	if err != nil {
		return telemetry{}, fmt.Errorf("jobs: metric %s: %w", MetricFinished, err)
	}
	duration, err := meter.Float64Histogram(MetricDuration,
		metric.WithUnit("s"),
		metric.WithDescription("Run time of job handlers by kind and outcome."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return telemetry{}, fmt.Errorf("jobs: metric %s: %w", MetricDuration, err)
	}
	return telemetry{tracer: d.Tracer.Tracer(scope), finished: finished, duration: duration}, nil
}

// panicked is the error type logged for a handler that panicked.
type panicked struct{}

func (panicked) Error() string     { return "job handler panicked" }
func (panicked) ErrorType() string { return "panic" }

// run calls fn inside the span job.work and records the outcome in the
// metrics and, for failures, in the log. A panic is recorded and re-raised
// so that River handles it as usual (a failed attempt).
func (r *Runtime) run(ctx context.Context, kind, queue string, final bool, fn func(context.Context) error) (err error) {
	t := r.tel
	ctx, span := t.tracer.Start(ctx, SpanWork, trace.WithAttributes(attr.JobKind.String(kind), attr.Queue.String(queue)))
	start := time.Now()
	defer func() {
		p := recover()
		failure := err
		if p != nil {
			failure = panicked{}
		}
		outcome := classify(failure, final, r.isStopping())
		span.SetAttributes(attr.Outcome.String(outcome))
		if outcome == OutcomeRetried || outcome == OutcomeDiscarded {
			span.SetStatus(codes.Error, "")
			span.SetAttributes(attr.ErrorType.String(errs.Class(failure)))
			level, msg := slog.LevelWarn, "job failed"
			if outcome == OutcomeDiscarded {
				level, msg = slog.LevelError, "job discarded"
			}
			r.d.Log.LogAttrs(ctx, level, msg, slog.String(string(attr.JobKind), kind), otel.ErrorAttr(failure))
		}
		span.End()
		k := attr.JobKind.String(kind)
		o := attr.Outcome.String(outcome)
		t.finished.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(k, attr.Queue.String(queue), o)))
		t.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributeSet(attribute.NewSet(k, o)))
		if p != nil {
			panic(p)
		}
	}()
	return fn(ctx)
}

func classify(err error, final, stopping bool) string {
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	switch {
	case err == nil:
		return OutcomeCompleted
	case stopping && errors.Is(err, context.Canceled):
		return OutcomeInterrupted
	case errors.As(err, &snooze):
		return OutcomeSnoozed
	case errors.As(err, &cancel):
		return OutcomeCancelled
	case final:
		return OutcomeDiscarded
	default:
		return OutcomeRetried
	}
}
