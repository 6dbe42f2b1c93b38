package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/eventlog"
	"bothy/server/internal/kernel/ids"
)

// CreateChannel is the input of Service.CreateChannel.
type CreateChannel struct {
	// SpaceID is the space of the new channel.
	SpaceID ids.ID
	// Name of the channel, unique in the space; see domain.ValidateName.
	Name string
}

// CreateChannel creates a channel in a space and appends channel.created
// (channel.manage: owners in a session, audited). Errors: not_found for an
// unknown space, the denials of channel.manage, validation_failed /name,
// conflict name_taken.
func (s *Service) CreateChannel(ctx context.Context, cmd CreateChannel) (domain.Channel, error) {
	var out domain.Channel
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		sp, err := s.space(ctx, cmd.SpaceID)
		if err != nil {
			return err
		}
		id, now, err := s.admitNamed(ctx, authorize.ChannelManage, authorize.Resource{Kind: authorize.KindChannel, SpaceID: sp.ID}, cmd.Name)
		if err != nil {
			return err
		}
		p := actor.From(ctx)
		c := domain.Channel{ID: id, SpaceID: sp.ID, Name: cmd.Name, CreatedBy: p.ID, CreatedAt: now}
		if err := s.store.InsertChannel(ctx, c); err != nil {
			return err
		}
		if err := s.recordAllow(ctx, authorize.ChannelManage, authorize.KindChannel, id,
			auditing.Code("change", "created"), auditing.ID("space_id", sp.ID)); err != nil {
			return err
		}
		if _, err := s.events.Append(ctx, eventlog.Event{Type: eventlog.ChannelCreated, ResourceID: c.ID,
			SpaceID: c.SpaceID, ChannelID: c.ID, ActorID: p.ID, Payload: domain.ChannelCreatedPayload(c)}); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}
