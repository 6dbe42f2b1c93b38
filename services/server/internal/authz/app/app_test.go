package app_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"bothy/server/internal/authz/authztest"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/platform/otel/attr"
	"bothy/server/internal/platform/otel/oteltest"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"

	azapp "bothy/server/internal/authz/app"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var start = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

type testBundle struct {
	db      *pgtest.DB
	clock   *clock.Fake
	uow     *pg.UnitOfWork
	world   authztest.World
	az      *azapp.Authorizer
	metrics *oteltest.Metrics
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	db := pgtest.New(t)
	clk := clock.NewFake(start)
	metrics := oteltest.NewMetrics(t)
	return &testBundle{
		db:      db,
		clock:   clk,
		uow:     pg.NewUnitOfWork(db.App, 3, 5*time.Second),
		world:   authztest.BuildWorld(t, db, clk),
		az:      authztest.NewAuthorizer(t, db, clk, metrics.Provider),
		metrics: metrics,
	}
}

// decisions returns the value of bothy.authz.decisions for outcome and
// reason (empty for allows, which carry none).
func (b *testBundle) decisions(t *testing.T, outcome, reason string) int64 {
	t.Helper()
	kv := []attribute.KeyValue{attr.Outcome.String(outcome)}
	if reason != "" {
		kv = append(kv, attr.Reason.String(reason))
	}
	return b.metrics.Sum(t, "bothy.authz.decisions", kv...)
}

var background = context.Background()
