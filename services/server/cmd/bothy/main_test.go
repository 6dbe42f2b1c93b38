package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnknownCommandExitsTwo(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	require.Equal(t, 2, run(context.Background(), []string{"frobnicate"}, &out, &errOut))
	require.Contains(t, errOut.String(), "unknown command")
}

func TestHelpListsCommands(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.Equal(t, 0, run(context.Background(), nil, &out, &out))
	require.Contains(t, out.String(), "version")
}
