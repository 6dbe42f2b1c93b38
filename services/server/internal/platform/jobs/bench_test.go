package jobs_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// BenchmarkInsertTx measures jobs inserted per second inside a unit of work,
// with one job per transaction (a use case scheduling one delivery) and with
// a batch per transaction (a consumer round scheduling many). The runtime is
// in role api, so nothing works the jobs while they are measured.
func BenchmarkInsertTx(b *testing.B) {
	db := pgtest.New(b)
	rt, err := jobs.New(options("api"), jobs.Deps{Pool: db.App, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(b, err)
	require.NoError(b, jobs.Register(rt, func(context.Context, jobs.Job[webhookDeliverArgs]) error { return nil },
		jobs.HandlerOptions{Queue: jobs.QueueDelivery}))
	uow := pg.NewUnitOfWork(db.App, 3, 0)
	ins := rt.Inserter()
	ctx := context.Background()
	args := webhookDeliverArgs{}

	for _, perTx := range []int{1, 50} {
		b.Run(fmt.Sprintf("jobs_per_tx=%d", perTx), func(b *testing.B) {
			inserted := 0
			for b.Loop() {
				err := uow.Do(ctx, func(ctx context.Context) error {
					for range perTx {
						if err := ins.InsertTx(ctx, args, jobs.InsertOptions{}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				inserted += perTx
			}
			b.ReportMetric(float64(inserted)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}
