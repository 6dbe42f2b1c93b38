// Package chat is the port of the chat module (spaces, channels, threads,
// messages): the facts other modules need about the chat tree.
package chat

import (
	"context"

	"bothy/server/internal/kernel/ids"
)

// Memberships answers who belongs to a space.
type Memberships interface {
	// IsSpaceMember reports whether the person principalID is a member of
	// spaceID. Unknown spaces and principals give false, not an error.
	IsSpaceMember(ctx context.Context, spaceID, principalID ids.ID) (bool, error)
}
