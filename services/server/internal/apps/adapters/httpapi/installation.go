package httpapi

import (
	"context"

	"bothy/server/api"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/kernel/errs"
)

// InstallApp implements installApp: the installation and the app token,
// a one-time secret the use case marks as such for the idempotency stage.
func (h *Handlers) InstallApp(ctx context.Context, req api.InstallAppRequestObject) (api.InstallAppResponseObject, error) {
	if req.Body == nil {
		return nil, errs.Validation(errs.Field("", "required"))
	}
	cmd := app.InstallApp{AppID: req.AppId, Scopes: fromScopes(req.Body.Scopes)}
	if cmd.Scopes == nil {
		cmd.Scopes = []string{}
	}
	if req.Body.EventSubscriptions != nil {
		cmd.EventSubscriptions = fromEventTypes(*req.Body.EventSubscriptions)
	}
	out, err := h.svc.InstallApp(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return api.InstallApp201JSONResponse{Body: api.AppInstallationCreated{
		Installation: toInstallation(out.Installation),
		AppToken:     out.AppToken,
	}}, nil
}

// UninstallApp implements uninstallApp.
func (h *Handlers) UninstallApp(ctx context.Context, req api.UninstallAppRequestObject) (api.UninstallAppResponseObject, error) {
	if err := h.svc.UninstallApp(ctx, req.AppId); err != nil {
		return nil, err
	}
	return api.UninstallApp204Response{}, nil
}

// SuspendApp implements suspendApp.
func (h *Handlers) SuspendApp(ctx context.Context, req api.SuspendAppRequestObject) (api.SuspendAppResponseObject, error) {
	inst, err := h.svc.SuspendApp(ctx, req.AppId)
	if err != nil {
		return nil, err
	}
	return api.SuspendApp200JSONResponse{Body: toInstallation(inst)}, nil
}

// ResumeApp implements resumeApp.
func (h *Handlers) ResumeApp(ctx context.Context, req api.ResumeAppRequestObject) (api.ResumeAppResponseObject, error) {
	inst, err := h.svc.ResumeApp(ctx, req.AppId)
	if err != nil {
		return nil, err
	}
	return api.ResumeApp200JSONResponse{Body: toInstallation(inst)}, nil
}

// SetAppScopes implements setAppScopes.
func (h *Handlers) SetAppScopes(ctx context.Context, req api.SetAppScopesRequestObject) (api.SetAppScopesResponseObject, error) {
	if req.Body == nil {
		return nil, errs.Validation(errs.Field("", "required"))
	}
	inst, err := h.svc.SetAppScopes(ctx, app.SetAppScopes{AppID: req.AppId, Scopes: fromScopes(req.Body.Scopes)})
	if err != nil {
		return nil, err
	}
	return api.SetAppScopes200JSONResponse(toInstallation(inst)), nil
}
