package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunExitStatusForInvocations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"help exits 0", []string{"-h"}, 0},
		{"an unknown flag exits 2", []string{"--colour"}, 2},
		{"an argument exits 2", []string{"now"}, 2},
		{"a message count outside the texts fails with 1", []string{"--messages", "9"}, 1},
		{"a configuration that does not load fails with 1", []string{"--config", "/nonexistent/bothy-demo.yaml"}, 1},
	} {
		var out, errOut bytes.Buffer
		require.Equal(t, tc.want, run(context.Background(), tc.args, nil, &out, &errOut), tc.name)
		if tc.want == 1 {
			require.Contains(t, out.String(), "FAIL: ", tc.name)
		}
	}
}
