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
	ID        ids.ID
	Name      string
	CreatedBy ids.ID
	CreatedAt time.Time
}

// Level is what a space membership gives on the space and every channel in
// it. The values are the levels of internal/authz (read < write < admin).
type Level string

// The membership levels.
const (
	LevelRead  Level = "read"
	LevelWrite Level = "write"
	LevelAdmin Level = "admin"
)

// Valid reports whether l is one of the levels.
func (l Level) Valid() bool { return l == LevelRead || l == LevelWrite || l == LevelAdmin }

// Member is a person's membership of a space.
type Member struct {
	SpaceID   ids.ID
	PersonID  ids.ID
	Level     Level
	CreatedAt time.Time
}

// Channel is a channel of a space such as Support/Eskalation.
type Channel struct {
	ID        ids.ID
	SpaceID   ids.ID
	Name      string
	CreatedBy ids.ID
	CreatedAt time.Time
}

// Thread is a thread of a channel, opened by its root message.
type Thread struct {
	ID            ids.ID
	SpaceID       ids.ID
	ChannelID     ids.ID
	RootMessageID ids.ID
	CreatedBy     ids.ID
	CreatedAt     time.Time
}

// Message is a message of a channel, in a thread when ThreadID is set (the
// root message of a thread belongs to it too).
type Message struct {
	ID        ids.ID
	SpaceID   ids.ID
	ChannelID ids.ID
	// ThreadID is Zero for a message outside any thread.
	ThreadID ids.ID
	AuthorID ids.ID
	// Text is empty exactly for a deleted message.
	Text      string
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
	CreatedAt time.Time `json:"t"`
	ID        ids.ID    `json:"id"`
}

// PositionOf returns the position just after m in a page.
func PositionOf(m Message) Position { return Position{CreatedAt: m.CreatedAt, ID: m.ID} }
