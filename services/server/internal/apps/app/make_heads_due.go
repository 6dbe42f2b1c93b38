package app

import (
	"context"

	"bothy/server/internal/kernel/ids"
)

// MakeHeadsDue is the delivery part of resuming an installation (Design
// note 14, apps.Webhooks.ResumeInstallation): the head of each active
// subscription of installationID becomes due now and its job is scheduled,
// so the rows that waited while the installation was suspended go out in
// order. It runs in the caller's unit of work (the resume use case), which
// must exist: the job is inserted with the change. Paused and disabled
// subscriptions keep waiting.
//
// Errors: database failures and jobs.ErrNoTransaction outside a unit of
// work, as *errs.Error values.
func (s *Deliveries) MakeHeadsDue(ctx context.Context, installationID ids.ID) error {
	now := s.now()
	subs, err := s.store.MakeInstallationHeadsDue(ctx, installationID, now)
	if err != nil {
		return err
	}
	for _, id := range subs {
		if err := s.scheduler.Schedule(ctx, id, now); err != nil {
			return err
		}
	}
	return nil
}
