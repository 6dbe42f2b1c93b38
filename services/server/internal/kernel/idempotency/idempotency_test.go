package idempotency_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
)

func TestValidKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		key  string
		ok   bool
	}{
		{"a UUID is valid", "0193b7a2-6f1e-7c3d-9a4b-2c1d0e9f8a7b", true},
		{"one character is valid", "x", true},
		{"255 characters are valid", strings.Repeat("k", 255), true},
		{"every visible character is valid", "!~\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}", true},
		{"an empty key is invalid", "", false},
		{"256 characters are invalid", strings.Repeat("k", 256), false},
		{"a space is invalid", "a b", false},
		{"a tab is invalid", "a\tb", false},
		{"DEL is invalid", "a\x7fb", false},
		{"non-ASCII is invalid", "schlüssel", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.ok, idempotency.ValidKey(tc.key))
		})
	}
}

// unrelatedKey is a context key of another package, so the test can derive a
// context that carries one more value.
type unrelatedKey struct{}

func TestMarkOneTimeSecret(t *testing.T) {
	t.Parallel()
	idempotency.MarkOneTimeSecret(context.Background()) // no idempotent request: nothing happens

	ctx, marked := idempotency.Watch(context.Background())
	require.False(t, marked())
	idempotency.MarkOneTimeSecret(context.WithValue(ctx, unrelatedKey{}, 1))
	require.True(t, marked(), "a derived context marks the same request")

	_, other := idempotency.Watch(context.Background())
	require.False(t, other(), "every Watch starts unmarked")
}

func TestErrKeyReuse(t *testing.T) {
	t.Parallel()
	require.Equal(t, errs.CodeIdempotencyKeyReuse, errs.CodeOf(idempotency.ErrKeyReuse()))
}
