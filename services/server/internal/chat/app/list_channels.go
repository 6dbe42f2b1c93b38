package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// ListChannels returns the channels of a space the principal may read,
// ordered by name, then id (channel.read): a member every channel of the
// space, an app the channels its grants cover. The others are left out
// without a denial audit (filter mode). Errors: not_found for an
// unknown or invisible space, the other denials of channel.read (an app
// without channels:read gets scope_missing).
func (s *Service) ListChannels(ctx context.Context, spaceID ids.ID) ([]domain.Channel, error) {
	out := []domain.Channel{}
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		out = out[:0]
		sp, err := s.space(ctx, spaceID)
		if err != nil {
			return err
		}
		if err := s.check(ctx, authorize.ChannelRead, authorize.Resource{Kind: authorize.KindChannel, SpaceID: sp.ID}); err != nil {
			return err
		}
		all, err := s.store.Channels(ctx, sp.ID)
		if err != nil {
			return err
		}
		for _, c := range all {
			ok, err := s.visible(ctx, authorize.ChannelRead, channelResource(c.SpaceID, c.ID))
			if err != nil {
				return err
			}
			if ok {
				out = append(out, c)
			}
		}
		return nil
	})
	return out, err
}
