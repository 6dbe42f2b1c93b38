package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// ListMessages is the input of Service.ListMessages.
type ListMessages struct {
	// ChannelID is the channel.
	ChannelID ids.ID
	// Before continues a listing after the position of its last page; nil
	// starts with the newest message.
	Before *domain.Position
	// Limit is the page size; 0 or less means chat.page_size_default, more
	// than chat.page_size_max is lowered to it.
	Limit int
}

// MessagePage is one page of messages, newest first.
type MessagePage struct {
	// Items are the live messages of the page (deleted ones are left out).
	Items []domain.Message
	// Next is the position to continue from; nil on the last page.
	Next *domain.Position
}

// ListMessages returns a page of the live messages of a channel, newest
// first by (created_at, id), thread replies included (each names its
// thread) (message.read: members, apps with messages:read and a grant).
// Errors: not_found for an unknown or invisible channel, the other
// denials of message.read.
func (s *Service) ListMessages(ctx context.Context, q ListMessages) (MessagePage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = s.opts.PageSizeDefault
	}
	limit = min(limit, s.opts.PageSizeMax)
	var out MessagePage
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		ch, err := s.channel(ctx, q.ChannelID, authorize.MessageRead)
		if err != nil {
			return err
		}
		if err := s.check(ctx, authorize.MessageRead, channelResource(ch.SpaceID, ch.ID)); err != nil {
			return err
		}
		items, err := s.store.MessagesBefore(ctx, ch.ID, q.Before, limit+1)
		if err != nil {
			return err
		}
		out = MessagePage{Items: items}
		if len(items) > limit {
			out.Items = items[:limit]
			next := domain.PositionOf(items[limit-1])
			out.Next = &next
		}
		return nil
	})
	return out, err
}
