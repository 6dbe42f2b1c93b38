package pg

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Fill opens the connections pool keeps open (its MinConns,
// Options.MinConns) and returns once each is open and warmed: pgxpool
// hands out a connection only after Options.Warm planned on it, so Fill
// takes every one of them at once and gives them back together. A server
// process fills its pool before it reports ready and starts its work, so
// its first requests and deliveries do not share the machine with the
// warm-up of its other connections (ADR 0096).
//
// It returns how many connections it held at once (all of them when the
// error is nil) and the errors of those that could not be opened (for
// example PostgreSQL's max_connections reached, SQLSTATE 53300): the
// connections that opened stay in the pool and serve, and pgxpool tries
// the missing ones again at its next health check. A cancelled ctx ends
// the wait with ctx's error. A pool without MinConns has nothing to
// fill: Fill returns 0 and nil at once.
func Fill(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	want := int(pool.Config().MinConns)
	taken := make([]*pgxpool.Conn, want)
	errs := make([]error, want)
	var wg sync.WaitGroup
	for i := range want {
		wg.Go(func() {
			// Each Acquire takes an idle connection, waits for one the pool
			// is opening, or opens one; holding every one until all are
			// taken makes the pool open all of them. One that fails does
			// not stop the others: a connection being opened meanwhile may
			// still succeed.
			taken[i], errs[i] = pool.Acquire(ctx)
		})
	}
	wg.Wait()
	opened := 0
	for _, c := range taken {
		if c != nil {
			c.Release()
			opened++
		}
	}
	return opened, errors.Join(errs...)
}
