// Package app holds the use cases of the chat module, one file each, and
// the outgoing port Store. Every use case runs in one unit of work: it
// loads the rows it acts on, authorizes with a Resource filled from them
// (kernel/authorize), validates, writes, audits allowed changes of audited
// actions and appends its durable event in the same unit of work (ADR 0051;
// the append takes no lock, ADR 0070).
package app

import (
	"context"
	"time"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/ids"
)

// Store persists the chat tree. Every method runs in the unit of work of
// ctx. Lookups report false for unknown IDs; errors are internal unless a
// method names a constraint it translates.
type Store interface {
	// InsertSpace stores s.
	InsertSpace(ctx context.Context, s domain.Space) error
	// SpaceByID returns the space id.
	SpaceByID(ctx context.Context, id ids.ID) (domain.Space, bool, error)
	// Spaces returns every space ordered by name, then id.
	Spaces(ctx context.Context) ([]domain.Space, error)
	// InsertMember stores m. Errors: conflict already_member when the
	// person is a member already; validation_failed /person_id not_found
	// when PersonID names no person.
	InsertMember(ctx context.Context, m domain.Member) error
	// InsertChannel stores c. Errors: conflict name_taken when the space
	// has a channel of that name.
	InsertChannel(ctx context.Context, c domain.Channel) error
	// ChannelsByIDs returns those of channelIDs that exist, in no
	// particular order, with one statement.
	ChannelsByIDs(ctx context.Context, channelIDs []ids.ID) ([]domain.Channel, error)
	// Channels returns the channels of spaceID ordered by name, then id.
	Channels(ctx context.Context, spaceID ids.ID) ([]domain.Channel, error)
	// ThreadByID returns the thread id.
	ThreadByID(ctx context.Context, id ids.ID) (domain.Thread, bool, error)
	// InsertMessages stores ms, with one statement whatever their number;
	// their threads may be inserted after them in the same unit of work
	// (the reference is checked at commit).
	InsertMessages(ctx context.Context, ms []domain.Message) error
	// InsertThread stores t; its root message must exist.
	InsertThread(ctx context.Context, t domain.Thread) error
	// LiveMessageForUpdate returns the message id and locks its row until
	// the end of the unit of work; false for unknown and deleted messages.
	LiveMessageForUpdate(ctx context.Context, id ids.ID) (domain.Message, bool, error)
	// UpdateMessageText sets the text and updated_at of message id.
	UpdateMessageText(ctx context.Context, id ids.ID, text string, at time.Time) error
	// MarkMessageDeleted sets deleted_at and empties the text of message id.
	MarkMessageDeleted(ctx context.Context, id ids.ID, at time.Time) error
	// MessagesBefore returns up to limit live messages of channelID newest
	// first (created_at, then id, both descending), starting after before
	// when it is not nil.
	MessagesBefore(ctx context.Context, channelID ids.ID, before *domain.Position, limit int) ([]domain.Message, error)
}
