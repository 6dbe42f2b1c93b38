// Package domain holds the pure rules of the chat module: the entities
// (spaces, members, channels, threads, messages), the validation of names,
// levels and message text, the payloads of the durable events chat appends
// and the position of a message page. Nothing here does I/O.
package domain

import (
	"time"

	"bothy/server/internal/kernel/ids"
)

// Space is a chat space such as Support.
type Space struct {
	// ID identifies the space.
	ID ids.ID
	// Name is the display name (chat.name_max_chars).
	Name string
	// CreatedBy is the owner who created it.
	CreatedBy ids.ID
	// CreatedAt is when it was created.
	CreatedAt time.Time
}

// Level is what a space membership gives on the space and every channel in
// it. The values are the levels of internal/authz (read < write < admin).
type Level string

// The membership levels.
const (
	// LevelRead reads the space's channels and messages.
	LevelRead Level = "read"
	// LevelWrite also posts and edits own messages.
	LevelWrite Level = "write"
	// LevelAdmin is the highest level; owner-only actions still need the
	// owner role.
	LevelAdmin Level = "admin"
)

// Valid reports whether l is one of the levels.
func (l Level) Valid() bool { return l == LevelRead || l == LevelWrite || l == LevelAdmin }

// Member is a person's membership of a space.
type Member struct {
	// SpaceID is the space.
	SpaceID ids.ID
	// PersonID is the member, always a person.
	PersonID ids.ID
	// Level is what the membership gives.
	Level Level
	// CreatedAt is when the person was added.
	CreatedAt time.Time
}

// Channel is a channel of a space such as Support/Eskalation.
type Channel struct {
	// ID identifies the channel.
	ID ids.ID
	// SpaceID is its space.
	SpaceID ids.ID
	// Name is unique in the space (chat.name_max_chars).
	Name string
	// CreatedBy is the owner who created it.
	CreatedBy ids.ID
	// CreatedAt is when it was created.
	CreatedAt time.Time
}

// Thread is a thread of a channel, opened by its root message.
type Thread struct {
	// ID identifies the thread.
	ID ids.ID
	// SpaceID and ChannelID place it.
	SpaceID, ChannelID ids.ID
	// RootMessageID is the message that opened it (and belongs to it).
	RootMessageID ids.ID
	// CreatedBy is the author of the root message.
	CreatedBy ids.ID
	// CreatedAt is when it was opened.
	CreatedAt time.Time
}

// Message is a message of a channel, in a thread when ThreadID is set (the
// root message of a thread belongs to it too).
type Message struct {
	// ID identifies the message.
	ID ids.ID
	// SpaceID and ChannelID place it.
	SpaceID, ChannelID ids.ID
	// ThreadID is Zero for a message outside any thread.
	ThreadID ids.ID
	// AuthorID is the principal that posted it (a person or an app).
	AuthorID ids.ID
	// Text is empty exactly for a deleted message.
	Text string
	// CreatedAt is when it was posted.
	CreatedAt time.Time
	// UpdatedAt is zero until the first edit.
	UpdatedAt time.Time
	// DeletedAt is zero for a live message.
	DeletedAt time.Time
}

// Deleted reports whether m was deleted.
func (m Message) Deleted() bool { return !m.DeletedAt.IsZero() }

// Position is where a page of messages ends: the (CreatedAt, ID) of its
// last message. Pages run newest first, so the next page holds the
// messages before the position. The HTTP layer turns it into an opaque
// cursor; its JSON form is part of the cursor and changes only with a new
// cursor version.
type Position struct {
	// CreatedAt is the created_at of the last message of the page.
	CreatedAt time.Time `json:"t"`
	// ID is its ID, the tie breaker.
	ID ids.ID `json:"id"`
}

// PositionOf returns the position just after m in a page.
func PositionOf(m Message) Position { return Position{CreatedAt: m.CreatedAt, ID: m.ID} }
