package app

import (
	"context"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// change is one change of the current installation of an app, shared by
// the lifecycle and scope use cases.
type change struct {
	action authorize.Action
	appID  ids.ID
	// apply computes the new installation from the locked current one and
	// the app; it returns changed = false when nothing is to be written.
	apply func(cur apps.Installation, a domain.App) (next apps.Installation, changed bool, err error)
	// effect runs after the row is written, in the unit of work (token
	// revocation, hooks); optional.
	effect func(ctx context.Context, next apps.Installation) error
	// details are the audit details beyond installation_id.
	details func(prev, next apps.Installation) []auditing.Detail
}

// changeInstallation runs c as one unit of work: authorize c.action on the
// app; load the app (not_found); lock its current installation (conflict
// app_not_installed without one); apply; write the row; run the effect;
// audit; append app.installation.updated. It returns the installation as
// it is afterwards.
func (s *Service) changeInstallation(ctx context.Context, c change) (apps.Installation, error) {
	var out apps.Installation
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		p, a, err := s.authorizeAndLoad(ctx, c.action, c.appID)
		if err != nil {
			return err
		}
		cur, ok, err := s.store.LockCurrentInstallation(ctx, a.ID)
		if err != nil {
			return err
		}
		if !ok {
			return errs.Conflict(domain.ReasonAppNotInstalled)
		}
		next, changed, err := c.apply(cur, a)
		if err != nil {
			return err
		}
		if !changed {
			out = cur
			return nil
		}
		next.UpdatedAt = s.now()
		if next.State == apps.InstallationUninstalled {
			next.UninstalledAt = next.UpdatedAt
		}
		if err := s.store.UpdateInstallation(ctx, next); err != nil {
			return err
		}
		if c.effect != nil {
			if err := c.effect(ctx, next); err != nil {
				return err
			}
		}
		details := append([]auditing.Detail{auditing.ID("installation_id", next.ID)}, c.details(cur, next)...)
		if err := s.record(ctx, p, c.action, a.ID, details...); err != nil {
			return err
		}
		if err := s.appendUpdated(ctx, p, next); err != nil {
			return err
		}
		out = next
		return nil
	})
	if err != nil {
		return apps.Installation{}, err
	}
	return out, nil
}

// stateChange returns the apply function of an installation event.
func stateChange(ev domain.InstallationEvent) func(apps.Installation, domain.App) (apps.Installation, bool, error) {
	return func(cur apps.Installation, _ domain.App) (apps.Installation, bool, error) {
		state, err := domain.NextInstallationState(cur.State, ev)
		if err != nil {
			return cur, false, err
		}
		next := cur
		next.State = state
		return next, true, nil
	}
}

// stateDetails are the audit details of a state change.
func stateDetails(prev, next apps.Installation) []auditing.Detail {
	return []auditing.Detail{
		auditing.Code("previous_state", string(prev.State)),
		auditing.Code("state", string(next.State)),
	}
}
