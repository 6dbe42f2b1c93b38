package actor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
)

func TestContextRoundTrip(t *testing.T) {
	t.Parallel()
	require.True(t, actor.From(context.Background()).Anonymous())
	robin := actor.Principal{ID: ids.New(), Kind: actor.KindPerson, Role: actor.RoleOwner}
	got := actor.From(actor.With(context.Background(), robin))
	require.Equal(t, robin.ID, got.ID)
	require.True(t, got.IsOwner())
}

func TestHasScope(t *testing.T) {
	t.Parallel()
	tracker := actor.Principal{Kind: actor.KindApp, GrantedScopes: []string{"events:subscribe", "messages:read"}}
	require.True(t, tracker.HasScope("messages:read"))
	require.False(t, tracker.HasScope("messages:write"))
}
