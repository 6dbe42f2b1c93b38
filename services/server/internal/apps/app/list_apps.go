package app

import (
	"context"

	"bothy/server/internal/apps/domain"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/ids"
)

// ListApps returns every registered app ordered by name, then id (listApps,
// action app.read: owners only, no step-up); never nil.
//
// Errors (*errs.Error): the denials of the authorizer (not_found for anyone
// but an owner); internal.
func (s *Service) ListApps(ctx context.Context) ([]domain.App, error) {
	var out []domain.App
	err := s.uow.Do(ctx, func(ctx context.Context) error {
		if _, err := s.authorizeApp(ctx, authorize.AppRead, ids.Zero); err != nil {
			return err
		}
		var err error
		out, err = s.store.Apps(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
