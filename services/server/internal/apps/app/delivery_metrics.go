package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/platform/otel/attr"
)

// Names of the delivery metrics (docs/observability/signals.md 6.2, ADR
// 0077). None carries a subscription or app ID: every distinct value would
// be a new time series (D-OB-1).
const (
	// MetricDeliveriesFinished counts deliveries that reached a final
	// status, by bothy.outcome (succeeded, failed, dead) and bothy.reason
	// (the last_error code; absent for succeeded).
	MetricDeliveriesFinished = "bothy.webhook.deliveries.finished"
	// MetricAttemptDuration is the time of one sent attempt in seconds, from
	// the request to the answer or the transport failure, by bothy.outcome
	// (succeeded, throttled, gone, failed, blocked) and bothy.reason.
	MetricAttemptDuration = "bothy.webhook.attempt.duration"
	// MetricDeliveryLag is the time from the event's occurred_at to the
	// receiver's 2xx answer, in seconds: how far behind the events the
	// receivers are.
	MetricDeliveryLag = "bothy.webhook.delivery.lag"
	// MetricSubscriptionTransitions counts the system transitions of
	// subscriptions by bothy.webhook_subscription.state (the new state) and
	// bothy.reason (the cause: gone, max_consecutive_failures,
	// retry_max_age, gap, max_pending).
	MetricSubscriptionTransitions = "bothy.webhook.subscription.transitions"
	// MetricDeliveriesStalled counts the heads whose delivery job spent its
	// webhook.job_max_attempts runs on an error on the server's side: the
	// head names last_error internal_error and stays pending (D-M2-26-42).
	MetricDeliveriesStalled = "bothy.webhook.deliveries.stalled"
	// MetricDeliveriesPending is the number of pending deliveries, read by
	// BacklogGauges.
	MetricDeliveriesPending = "bothy.webhook.deliveries.pending"
	// MetricOldestPendingAge is the age in seconds of the oldest pending
	// delivery (a subscription's head), read by BacklogGauges; 0 without a
	// pending delivery.
	MetricOldestPendingAge = "bothy.webhook.deliveries.oldest_pending_age"
	// MetricSubscriptions is the number of webhook subscriptions by
	// bothy.webhook_subscription.state, read by BacklogGauges.
	MetricSubscriptions = "bothy.webhook.subscriptions"
	// MetricLagThreshold is metrics.delivery_lag_threshold in seconds, set
	// by BacklogGauges, so that the alert rules compare the lag with the
	// configured key instead of a copy of it (D-OB-3).
	MetricLagThreshold = "bothy.webhook.delivery.lag_threshold"
)

// meterScope is the instrumentation scope of the apps metrics.
const meterScope = "bothy/server/internal/apps"

// attemptBuckets are the boundaries of the attempt duration in seconds:
// from a receiver on the same network to webhook.delivery_timeout at its
// maximum.
var attemptBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60}

// lagBuckets are the boundaries of the delivery lag in seconds: from an
// idle worker (well below a second) to a receiver that was down for a day.
var lagBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 21600, 86400}

// deliveryMetrics records what the delivery path does. Its methods are
// called after the unit of work that wrote the outcome has committed, so a
// rolled back or repeated unit of work counts nothing twice.
type deliveryMetrics struct {
	finished    metric.Int64Counter
	attempt     metric.Float64Histogram
	lag         metric.Float64Histogram
	transitions metric.Int64Counter
	stalled     metric.Int64Counter
}

// newDeliveryMetrics creates the instruments on mp; a nil mp records
// nothing. The error names the instrument that could not be created.
func newDeliveryMetrics(mp metric.MeterProvider) (deliveryMetrics, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter(meterScope)
	var (
		d   deliveryMetrics
		err error
	)
	if d.finished, err = m.Int64Counter(MetricDeliveriesFinished, metric.WithUnit("{delivery}"),
		metric.WithDescription("Webhook deliveries that reached a final status, by status and last_error.")); err != nil {
		return d, fmt.Errorf("apps: metric %s: %w", MetricDeliveriesFinished, err)
	}
	if d.attempt, err = m.Float64Histogram(MetricAttemptDuration, metric.WithUnit("s"),
		metric.WithDescription("Time of one sent webhook attempt, by outcome and last_error."),
		metric.WithExplicitBucketBoundaries(attemptBuckets...)); err != nil {
		return d, fmt.Errorf("apps: metric %s: %w", MetricAttemptDuration, err)
	}
	if d.lag, err = m.Float64Histogram(MetricDeliveryLag, metric.WithUnit("s"),
		metric.WithDescription("Time from an event's occurred_at to the receiver's 2xx answer."),
		metric.WithExplicitBucketBoundaries(lagBuckets...)); err != nil {
		return d, fmt.Errorf("apps: metric %s: %w", MetricDeliveryLag, err)
	}
	if d.transitions, err = m.Int64Counter(MetricSubscriptionTransitions, metric.WithUnit("{transition}"),
		metric.WithDescription("System transitions of webhook subscriptions, by new state and cause.")); err != nil {
		return d, fmt.Errorf("apps: metric %s: %w", MetricSubscriptionTransitions, err)
	}
	if d.stalled, err = m.Int64Counter(MetricDeliveriesStalled, metric.WithUnit("{delivery}"),
		metric.WithDescription("Webhook heads whose delivery job spent its runs on an error on the server's side (last_error internal_error).")); err != nil {
		return d, fmt.Errorf("apps: metric %s: %w", MetricDeliveriesStalled, err)
	}
	// Exposed from the start with 0, so an alert or a dashboard sees a
	// healthy worker's series before the first stall.
	d.stalled.Add(context.Background(), 0)
	return d, nil
}

// stalledHead counts a head that Stalled marked with internal_error.
func (d deliveryMetrics) stalledHead(ctx context.Context) { d.stalled.Add(ctx, 1) }

// sentAttempt records one attempt that went out (or that the egress policy
// refused), classified as record classifies it; elapsed is the time the
// send took.
func (d deliveryMetrics) sentAttempt(ctx context.Context, res SendResult, err error, elapsed time.Duration) {
	o := webhook.Classify(res.StatusCode, err)
	attrs := []attribute.KeyValue{attr.Outcome.String(o.SpanOutcome())}
	if o.LastError != "" {
		attrs = append(attrs, attr.Reason.String(string(o.LastError)))
	}
	d.attempt.Record(ctx, elapsed.Seconds(), metric.WithAttributeSet(attribute.NewSet(attrs...)))
}

// transition records one system transition of a subscription.
func (d deliveryMetrics) transition(ctx context.Context, t transition) {
	d.transitions.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		attr.WebhookSubscriptionState.String(string(t.To)), attr.Reason.String(t.Cause))))
}

// finishedDelivery is one delivery a unit of work made final.
type finishedDelivery struct {
	status     apps.DeliveryStatus
	lastError  apps.LastError
	occurredAt time.Time
	at         time.Time
}

// deliveryTally collects the deliveries one unit of work of Deliver made
// final; flush records them once the unit of work has committed. The unit
// of work may run its function again after a deadlock, so reset empties it
// at the start of each run.
type deliveryTally struct {
	items []finishedDelivery
}

// reset forgets what a rolled back run of the unit of work collected.
func (t *deliveryTally) reset() { t.items = t.items[:0] }

// finished notes a delivery that got status with lastError at the time at;
// a pending status is not final and is ignored. occurredAt is the event's
// occurred_at, the start of the lag of a succeeded delivery.
func (t *deliveryTally) finished(status apps.DeliveryStatus, lastError apps.LastError, occurredAt, at time.Time) {
	if status == apps.DeliveryPending {
		return
	}
	t.items = append(t.items, finishedDelivery{status: status, lastError: lastError, occurredAt: occurredAt, at: at})
}

// flush records and forgets the collected deliveries.
func (d deliveryMetrics) flush(ctx context.Context, t *deliveryTally) {
	for _, f := range t.items {
		attrs := []attribute.KeyValue{attr.Outcome.String(string(f.status))}
		if f.lastError != "" {
			attrs = append(attrs, attr.Reason.String(string(f.lastError)))
		}
		d.finished.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attrs...)))
		if f.status == apps.DeliverySucceeded && !f.occurredAt.IsZero() {
			d.lag.Record(ctx, max(f.at.Sub(f.occurredAt), 0).Seconds())
		}
	}
	t.reset()
}

// DeliveryBacklog is what one read of BacklogReader returns.
type DeliveryBacklog struct {
	// Pending is the number of pending deliveries.
	Pending int64
	// OldestPendingCreatedAt is the created_at of the oldest pending
	// delivery, or the now passed to the read when there is none.
	OldestPendingCreatedAt time.Time
	// Subscriptions is the number of subscriptions in each state; every
	// state is present, a state without subscriptions with 0.
	Subscriptions map[apps.SubscriptionState]int64
}

// BacklogReader reads the delivery backlog in one cheap statement
// (postgres.DeliveryStore). now is returned as OldestPendingCreatedAt when
// nothing is pending. Any error is a database error.
type BacklogReader interface {
	DeliveryBacklog(ctx context.Context, now time.Time) (DeliveryBacklog, error)
}

// BacklogOptions configure BacklogGauges. Only internal/wire reads
// configuration.
type BacklogOptions struct {
	// LagThreshold is metrics.delivery_lag_threshold: the delivery lag the
	// alert WebhookDeliveryLagHigh fires above, exposed as
	// bothy.webhook.delivery.lag_threshold. Must be positive.
	LagThreshold time.Duration
}

// BacklogDeps are the collaborators of BacklogGauges; all are required.
type BacklogDeps struct {
	// Reader reads the backlog.
	Reader BacklogReader
	// Meter makes the gauges.
	Meter metric.MeterProvider
	// Clock gives the now the age of the oldest pending delivery is
	// measured against.
	Clock clock.Clock
}

// BacklogGauges keeps the gauges bothy.webhook.deliveries.pending,
// bothy.webhook.deliveries.oldest_pending_age, bothy.webhook.subscriptions
// and bothy.webhook.delivery.lag_threshold current: the worker roles call
// Refresh once per metrics.gauge_interval (otel.Poll), never per delivery
// or per scrape (D-OB-2).
type BacklogGauges struct {
	reader        BacklogReader
	clock         clock.Clock
	threshold     time.Duration
	pending       metric.Int64Gauge
	oldest        metric.Float64Gauge
	subscriptions metric.Int64Gauge
	lagThreshold  metric.Float64Gauge
}

// NewBacklogGauges returns the gauges. It returns an error when a required
// dependency is missing, the threshold is not positive or an instrument
// cannot be created (wiring bugs).
func NewBacklogGauges(d BacklogDeps, o BacklogOptions) (*BacklogGauges, error) {
	if d.Reader == nil || d.Meter == nil || d.Clock == nil {
		return nil, errors.New("apps: NewBacklogGauges needs a reader, a meter provider and a clock")
	}
	if o.LagThreshold <= 0 {
		return nil, errors.New("apps: metrics.delivery_lag_threshold must be positive")
	}
	m := d.Meter.Meter(meterScope)
	g := &BacklogGauges{reader: d.Reader, clock: d.Clock, threshold: o.LagThreshold}
	var err error
	if g.pending, err = m.Int64Gauge(MetricDeliveriesPending, metric.WithUnit("{delivery}"),
		metric.WithDescription("Pending webhook deliveries.")); err != nil {
		return nil, fmt.Errorf("apps: metric %s: %w", MetricDeliveriesPending, err)
	}
	if g.oldest, err = m.Float64Gauge(MetricOldestPendingAge, metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest pending webhook delivery; 0 without one.")); err != nil {
		return nil, fmt.Errorf("apps: metric %s: %w", MetricOldestPendingAge, err)
	}
	if g.subscriptions, err = m.Int64Gauge(MetricSubscriptions, metric.WithUnit("{subscription}"),
		metric.WithDescription("Webhook subscriptions by state.")); err != nil {
		return nil, fmt.Errorf("apps: metric %s: %w", MetricSubscriptions, err)
	}
	if g.lagThreshold, err = m.Float64Gauge(MetricLagThreshold, metric.WithUnit("s"),
		metric.WithDescription("The configured delivery lag threshold (metrics.delivery_lag_threshold).")); err != nil {
		return nil, fmt.Errorf("apps: metric %s: %w", MetricLagThreshold, err)
	}
	return g, nil
}

// Refresh reads the backlog once and sets the gauges. On an error the
// gauges keep their last values and the error is returned.
func (g *BacklogGauges) Refresh(ctx context.Context) error {
	g.lagThreshold.Record(ctx, g.threshold.Seconds())
	now := g.clock.Now()
	b, err := g.reader.DeliveryBacklog(ctx, now)
	if err != nil {
		return err
	}
	g.pending.Record(ctx, b.Pending)
	age := time.Duration(0)
	if b.Pending > 0 {
		age = max(now.Sub(b.OldestPendingCreatedAt), 0)
	}
	g.oldest.Record(ctx, age.Seconds())
	for state, n := range b.Subscriptions {
		g.subscriptions.Record(ctx, n, metric.WithAttributeSet(attribute.NewSet(
			attr.WebhookSubscriptionState.String(string(state)))))
	}
	return nil
}
