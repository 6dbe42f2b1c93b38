package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
)

// UpdateMessage is the input of Service.UpdateMessage.
type UpdateMessage struct {
	// MessageID is the message to edit.
	MessageID ids.ID
	// Text is the new text; see domain.ValidateText.
	Text string
}

// messageResource fills the Resource of a message row.
func messageResource(m domain.Message) authorize.Resource {
	return authorize.Resource{Kind: authorize.KindMessage, ID: m.ID, SpaceID: m.SpaceID, ChannelID: m.ChannelID,
		ThreadID: m.ThreadID, Owner: m.AuthorID}
}

// UpdateMessage replaces the text of a message and appends message.updated
// (message.update: the author, with write on the channel). Errors:
// not_found for an unknown, deleted or invisible message, forbidden
// not_self for another author's visible message, the other denials of
// message.update, validation_failed /text.
func (s *Service) UpdateMessage(ctx context.Context, cmd UpdateMessage) (domain.Message, error) {
	var out domain.Message
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		m, err := s.liveMessage(ctx, cmd.MessageID)
		if err != nil {
			return err
		}
		if err := s.check(ctx, authorize.MessageUpdate, messageResource(m)); err != nil {
			return err
		}
		if fields := domain.ValidateText("/text", cmd.Text, s.opts.MessageMaxBytes); fields != nil {
			return errs.Validation(fields...)
		}
		m.Text, m.UpdatedAt = cmd.Text, s.now()
		if err := s.store.UpdateMessageText(ctx, m.ID, m.Text, m.UpdatedAt); err != nil {
			return err
		}
		if _, err := s.events.Append(ctx, eventlog.Event{Type: eventlog.MessageUpdated, ResourceID: m.ID,
			SpaceID: m.SpaceID, ChannelID: m.ChannelID, ThreadID: m.ThreadID, ActorID: actor.From(ctx).ID,
			Payload: domain.MessageUpdatedPayload(m)}); err != nil {
			return err
		}
		out = m
		return nil
	})
	return out, err
}
