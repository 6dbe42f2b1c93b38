package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
)

// DeleteMessage deletes a message and appends message.deleted
// (message.delete: the author or an owner, with write on the channel). The
// row stays without its text, so threads and events keep their
// references. Errors: not_found for an unknown, already deleted or
// invisible message, forbidden not_self for another author's visible
// message, the other denials of message.delete.
func (s *Service) DeleteMessage(ctx context.Context, messageID ids.ID) error {
	return s.uow.Do(ctx, func(ctx context.Context) error {
		m, err := s.liveMessage(ctx, messageID)
		if err != nil {
			return err
		}
		if err := s.check(ctx, authorize.MessageDelete, messageResource(m)); err != nil {
			return err
		}
		m.Text, m.DeletedAt = "", s.now()
		if err := s.store.MarkMessageDeleted(ctx, m.ID, m.DeletedAt); err != nil {
			return err
		}
		_, err = s.events.Append(ctx, eventlog.Event{Type: eventlog.MessageDeleted, ResourceID: m.ID,
			SpaceID: m.SpaceID, ChannelID: m.ChannelID, ThreadID: m.ThreadID, ActorID: actor.From(ctx).ID,
			Payload: domain.MessageDeletedPayload(m)})
		return err
	})
}
