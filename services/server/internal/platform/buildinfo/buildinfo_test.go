package buildinfo_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/buildinfo"
)

func TestVersionIsNeverEmpty(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, buildinfo.Version())
	require.Equal(t, buildinfo.Version(), buildinfo.Version(), "stable across calls")
}
