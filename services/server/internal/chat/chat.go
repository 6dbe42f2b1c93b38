// Package chat is the port of the chat module (spaces, channels, threads,
// messages): the facts other modules need about the chat tree.
package chat

import (
	"context"

	"bothy/server/internal/kernel/ids"
)

// Membership is one space membership of a person.
type Membership struct {
	// SpaceID is the space.
	SpaceID ids.ID
	// Level is what the membership gives on the space and every channel in
	// it: "read", "write" or "admin" (the levels of internal/authz).
	Level string
}

// Memberships answers who belongs to a space. It reads through the unit of
// work of ctx when there is one.
type Memberships interface {
	// IsSpaceMember reports whether the person principalID is a member of
	// spaceID. Unknown spaces and principals give false, not an error.
	IsSpaceMember(ctx context.Context, spaceID, principalID ids.ID) (bool, error)
	// MembershipsOf returns every membership of each person of
	// principalIDs, in no particular order, read with one statement; one
	// without (an app, an unknown principal) maps to an empty slice. The
	// authorizer loads them once per unit of work and principal, so a list
	// filtered by visibility costs one query, and a group of posts one for
	// all its authors.
	MembershipsOf(ctx context.Context, principalIDs []ids.ID) (map[ids.ID][]Membership, error)
}
