package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/authorize"
)

// ListSpaces returns the spaces the principal sees (07 4.3), ordered by
// name, then id (space.read). Spaces it does not see are left out without
// a denial audit (filter mode). Errors: the denials of space.read on the
// collection (unauthorized without a principal, subject_kind_not_allowed
// for agents, app_not_installed for an inactive app).
func (s *Service) ListSpaces(ctx context.Context) ([]domain.Space, error) {
	out := []domain.Space{}
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		out = out[:0]
		if err := s.check(ctx, authorize.SpaceRead, authorize.Resource{Kind: authorize.KindSpace}); err != nil {
			return err
		}
		all, err := s.store.Spaces(ctx)
		if err != nil {
			return err
		}
		for _, sp := range all {
			ok, err := s.visible(ctx, authorize.SpaceRead, spaceResource(sp.ID))
			if err != nil {
				return err
			}
			if ok {
				out = append(out, sp)
			}
		}
		return nil
	})
	return out, err
}
