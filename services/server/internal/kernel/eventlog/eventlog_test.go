package eventlog_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
)

func TestCatalogueIsConsistent(t *testing.T) {
	t.Parallel()
	seen := map[eventlog.Type]bool{}
	for _, info := range eventlog.Types() {
		require.False(t, seen[info.Type], "duplicate %s", info.Type)
		seen[info.Type] = true
		require.NotEmpty(t, info.Receivers, info.Type)
		require.Equal(t, info.Personal, info.ReceiveAction == authorize.ReceiveSelf,
			"%s: personal events and only they are received by self", info.Type)
		got, ok := eventlog.Lookup(info.Type)
		require.True(t, ok)
		require.Equal(t, info, got)
	}
	_, ok := eventlog.Lookup("message.exploded")
	require.False(t, ok)
}
