package txn_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

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
