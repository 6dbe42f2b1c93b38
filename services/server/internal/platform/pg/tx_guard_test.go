package pg_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
)

func TestRequireTxRefusesAContextWithoutUnitOfWork(t *testing.T) {
	t.Parallel()
	tx, err := pg.RequireTx(context.Background())
	require.Nil(t, tx)
	require.ErrorIs(t, err, pg.ErrNoUnitOfWork)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
}

func TestRequireTxReturnsTheAmbientTransaction(t *testing.T) {
	t.Parallel()
	ambient := &fakeTx{}
	tx, err := pg.RequireTx(pg.WithTx(context.Background(), ambient))
	require.NoError(t, err)
	require.Same(t, ambient, tx)
}

// fakeTx stands for the transaction a unit of work carries; RequireTx only
// hands it back.
type fakeTx struct{ pgx.Tx }

func TestNullTimeMapsTheZeroTimeToNull(t *testing.T) {
	t.Parallel()
	require.Nil(t, pg.NullTime(time.Time{}))
	at := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	require.Equal(t, at, *pg.NullTime(at))
}
