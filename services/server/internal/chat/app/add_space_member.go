package app

import (
	"context"

	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// AddSpaceMember is the input of Service.AddSpaceMember.
type AddSpaceMember struct {
	// SpaceID is the space.
	SpaceID ids.ID
	// PersonID is the person to add; apps get grants instead.
	PersonID ids.ID
	// Level is read, write or admin.
	Level domain.Level
}

// AddSpaceMember makes a person a member of a space with a level
// (space.manage: owners in a session, audited). Errors: not_found for an
// unknown space (and for everyone who may not see it), the denials of
// space.manage, validation_failed /level (enum) and /person_id (not_found:
// no such person), conflict already_member.
func (s *Service) AddSpaceMember(ctx context.Context, cmd AddSpaceMember) (domain.Member, error) {
	var out domain.Member
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		sp, err := s.space(ctx, cmd.SpaceID)
		if err != nil {
			return err
		}
		if err := s.check(ctx, authorize.SpaceManage, spaceResource(sp.ID)); err != nil {
			return err
		}
		if !cmd.Level.Valid() {
			return errs.Validation(errs.Field("/level", domain.CodeEnum))
		}
		m := domain.Member{SpaceID: sp.ID, PersonID: cmd.PersonID, Level: cmd.Level, CreatedAt: s.now()}
		// The person's cached standing lacks the membership (ADR 0103).
		s.changes.ChangedAtCommit(ctx, m.PersonID)
		if err := s.store.InsertMember(ctx, m); err != nil {
			return err
		}
		if err := s.recordAllow(ctx, authorize.SpaceManage, authorize.KindSpace, sp.ID,
			auditing.Code("change", "member_added"), auditing.ID("person_id", m.PersonID), auditing.Code("level", string(m.Level))); err != nil {
			return err
		}
		out = m
		return nil
	})
	return out, err
}
