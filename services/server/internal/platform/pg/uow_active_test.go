package pg_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
)

// TestUnitOfWorkMarksItsTransactionActive: txn.Active holds inside Do, in a
// nested Do, and never outside, so a use case that must not send a request
// inside a transaction can tell (ADR 0080).
func TestUnitOfWorkMarksItsTransactionActive(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := context.Background()
	uow := pg.NewUnitOfWork(db.App, 3, time.Second)
	require.False(t, txn.Active(ctx))
	var inside, nested bool
	require.NoError(t, uow.Do(ctx, func(ctx context.Context) error {
		inside = txn.Active(ctx)
		return uow.Do(ctx, func(ctx context.Context) error {
			nested = txn.Active(ctx)
			return nil
		})
	}))
	require.True(t, inside, "active inside Do")
	require.True(t, nested, "active in a nested Do")
}
