package correlation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/correlation"
)

func TestWithAndFrom(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		id   string
		want string
	}{
		{"a request id is carried", "0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a7b", "0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a7b"},
		{"a job id is carried", "job:4711", "job:4711"},
		{"an empty id is dropped", "", ""},
		{"an id with a space is dropped", "job 4711", ""},
		{"an id with a slash is dropped", "a/b", ""},
		{"an id of 65 characters is dropped", strings.Repeat("a", 65), ""},
		{"an id of 64 characters is carried", strings.Repeat("a", 64), strings.Repeat("a", 64)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := correlation.With(context.Background(), tc.id)
			require.Equal(t, tc.want, correlation.From(ctx))
		})
	}
}

func TestFromEmptyContext(t *testing.T) {
	t.Parallel()
	require.Empty(t, correlation.From(context.Background()))
}

func TestInvalidIDKeepsTheOuterOne(t *testing.T) {
	t.Parallel()
	ctx := correlation.With(context.Background(), "job:1")
	require.Equal(t, "job:1", correlation.From(correlation.With(ctx, "not valid")))
}
