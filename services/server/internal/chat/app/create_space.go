package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
)

// CreateSpace is the input of Service.CreateSpace.
type CreateSpace struct {
	// Name of the space; see domain.ValidateName.
	Name string
}

// CreateSpace creates a space (space.manage: owners in a session, audited).
// Errors: the denials of space.manage, validation_failed /name.
func (s *Service) CreateSpace(ctx context.Context, cmd CreateSpace) (domain.Space, error) {
	var out domain.Space
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		id, now, err := s.admitNamed(ctx, authorize.SpaceManage, authorize.Resource{Kind: authorize.KindSpace}, cmd.Name)
		if err != nil {
			return err
		}
		sp := domain.Space{ID: id, Name: cmd.Name, CreatedBy: actor.From(ctx).ID, CreatedAt: now}
		if err := s.store.InsertSpace(ctx, sp); err != nil {
			return err
		}
		if err := s.recordAllow(ctx, authorize.SpaceManage, authorize.KindSpace, id, auditing.Code("change", "created")); err != nil {
			return err
		}
		out = sp
		return nil
	})
	return out, err
}
