package app

import (
	"context"

	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// GetApp returns the app appID (getApp, action app.read: owners only, no
// step-up).
//
// Errors (*errs.Error): not_found for an unknown app and, identically, for
// anyone but an owner; internal.
func (s *Service) GetApp(ctx context.Context, appID ids.ID) (domain.App, error) {
	var out domain.App
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		var err error
		_, out, err = s.authorizeAndLoad(ctx, authorize.AppRead, appID)
		return err
	})
	return out, err
}
