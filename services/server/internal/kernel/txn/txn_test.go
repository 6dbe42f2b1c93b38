package txn_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/txn"
)

var countKey = txn.NewKey[int]("test.count")

func TestKeyLivesInItsMemoOnly(t *testing.T) {
	t.Parallel()
	outside := context.Background()
	countKey.Set(outside, 1)
	_, ok := countKey.Get(outside)
	require.False(t, ok, "no memo outside a transaction")

	first := txn.WithMemo(outside)
	countKey.Set(first, 7)
	v, ok := countKey.Get(first)
	require.True(t, ok)
	require.Equal(t, 7, v)

	second := txn.WithMemo(outside)
	_, ok = countKey.Get(second)
	require.False(t, ok, "a new transaction starts with an empty memo")
}

func TestGetOrSetKeepsTheFirstValue(t *testing.T) {
	t.Parallel()
	v, found := countKey.GetOrSet(context.Background(), 3)
	require.Equal(t, 3, v)
	require.False(t, found)
	_, ok := countKey.Get(context.Background())
	require.False(t, ok, "nothing is stored outside a transaction")

	ctx := txn.WithMemo(context.Background())
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Go(func() { got[i], _ = countKey.GetOrSet(ctx, i+10) })
	}
	wg.Wait()
	first, ok := countKey.Get(ctx)
	require.True(t, ok)
	for _, g := range got {
		require.Equal(t, first, g, "every caller gets the value stored first")
	}
	v, found = countKey.GetOrSet(ctx, 99)
	require.True(t, found)
	require.Equal(t, first, v)
}

// answer is an error of the database as a driver reports one.
type answer struct{ code string }

func (a answer) Error() string    { return "ERROR: " + a.code }
func (a answer) SQLState() string { return a.code }

func TestRefusedIsAnAnswerOfTheDatabase(t *testing.T) {
	t.Parallel()
	require.True(t, txn.Refused(answer{"23514"}))
	require.True(t, txn.Refused(errs.Wrap(fmt.Errorf("insert: %w", answer{"55P03"}), "chat: insert message failed")))
	require.False(t, txn.Refused(nil))
	require.False(t, txn.Refused(io.ErrUnexpectedEOF), "a lost connection leaves the commit open")
	require.False(t, txn.Refused(context.DeadlineExceeded))
	require.False(t, txn.Refused(errs.NotFound()))
}

func TestInUnitOfWorkIsTheMemosPresence(t *testing.T) {
	t.Parallel()
	require.False(t, txn.InUnitOfWork(context.Background()))
	require.True(t, txn.InUnitOfWork(txn.WithMemo(context.Background())))
}
