package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// CreateAppGrant is the input of Service.CreateAppGrant.
type CreateAppGrant struct {
	// AppID is the installed app that receives the grant.
	AppID ids.ID
	// SpaceID is the space of the grant.
	SpaceID ids.ID
	// ChannelID narrows the grant to one channel of SpaceID; Zero means
	// the whole space.
	ChannelID ids.ID
	// Level is read, write or admin.
	Level authz.Level
}

// CreateAppGrant gives the installed app appID a level on a space or on
// one channel of it (createAppGrant, action app.grant.manage: owner with a
// fresh step-up; docs/spec/11-extensions.md 5), for example G-6: write on
// Support/Eskalation for Tracker. The app's current installation is read
// FOR SHARE, so an uninstall cannot end the grants between the check and
// the insert. Audits app.grant.manage with grant_id, change = created,
// level, space_id and channel_id.
//
// Errors (*errs.Error): the denials of the authorizer; not_found for an
// unknown app; conflict app_not_installed without an active or suspended
// installation; the errors of authz.Grants.Grant (validation_failed with
// /level, /space_id, /channel_id; conflict grant_exists); internal.
func (s *Service) CreateAppGrant(ctx context.Context, cmd CreateAppGrant) (authz.Grant, error) {
	var out authz.Grant
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		p, a, err := s.authorizeAndLoad(ctx, authorize.AppGrantManage, cmd.AppID)
		if err != nil {
			return err
		}
		if _, ok, err := s.store.CurrentInstallation(ctx, a.ID, apps.ForShare); err != nil {
			return err
		} else if !ok {
			return errs.Conflict(domain.ReasonAppNotInstalled)
		}
		g, err := s.grants.Grant(ctx, authz.NewGrant{
			SubjectID: a.PrincipalID, Level: cmd.Level, SpaceID: cmd.SpaceID, ChannelID: cmd.ChannelID, CreatedBy: p.ID,
		})
		if err != nil {
			return err
		}
		if err := s.record(ctx, p, authorize.AppGrantManage, a.ID, grantDetails(g, "created")...); err != nil {
			return err
		}
		out = g
		return nil
	})
	return out, err
}

// grantDetails are the audit details of a grant change.
func grantDetails(g authz.Grant, change string) []auditing.Detail {
	d := []auditing.Detail{
		auditing.ID("grant_id", g.ID),
		auditing.Code("change", change),
		auditing.Code("level", string(g.Level)),
		auditing.ID("space_id", g.SpaceID),
	}
	if !g.ChannelID.IsZero() {
		d = append(d, auditing.ID("channel_id", g.ChannelID))
	}
	return d
}
