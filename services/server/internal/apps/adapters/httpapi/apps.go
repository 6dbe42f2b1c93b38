package httpapi

import (
	"context"

	"bothy/server/api"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/errs"
)

// ListApps implements listApps: every registered app, ordered by name.
func (h *Handlers) ListApps(ctx context.Context, _ api.ListAppsRequestObject) (api.ListAppsResponseObject, error) {
	list, err := h.svc.ListApps(ctx)
	if err != nil {
		return nil, err
	}
	items := make([]api.App, 0, len(list))
	for _, a := range list {
		items = append(items, toApp(a))
	}
	return api.ListApps200JSONResponse{Items: items}, nil
}

// CreateApp implements createApp: registers an app from its manifest.
func (h *Handlers) CreateApp(ctx context.Context, req api.CreateAppRequestObject) (api.CreateAppResponseObject, error) {
	if req.Body == nil {
		return nil, errs.Validation(errs.Field("", "required"))
	}
	a, err := h.svc.RegisterApp(ctx, app.RegisterApp{Manifest: fromManifest(req.Body.Manifest)})
	if err != nil {
		return nil, err
	}
	return api.CreateApp201JSONResponse{Body: toApp(a)}, nil
}

// GetApp implements getApp.
func (h *Handlers) GetApp(ctx context.Context, req api.GetAppRequestObject) (api.GetAppResponseObject, error) {
	a, err := h.svc.GetApp(ctx, req.AppId)
	if err != nil {
		return nil, err
	}
	return api.GetApp200JSONResponse(toApp(a)), nil
}
