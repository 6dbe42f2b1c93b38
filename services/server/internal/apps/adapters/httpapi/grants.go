package httpapi

import (
	"context"

	"bothy/server/api"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// ListAppGrants implements listAppGrants: the app's grants, oldest first.
func (h *Handlers) ListAppGrants(ctx context.Context, req api.ListAppGrantsRequestObject) (api.ListAppGrantsResponseObject, error) {
	list, err := h.svc.ListAppGrants(ctx, req.AppId)
	if err != nil {
		return nil, err
	}
	items := make([]api.Grant, 0, len(list))
	for _, g := range list {
		items = append(items, toGrant(req.AppId, g))
	}
	return api.ListAppGrants200JSONResponse{Items: items}, nil
}

// CreateAppGrant implements createAppGrant.
func (h *Handlers) CreateAppGrant(ctx context.Context, req api.CreateAppGrantRequestObject) (api.CreateAppGrantResponseObject, error) {
	if req.Body == nil {
		return nil, errs.Validation(errs.Field("", "required"))
	}
	cmd := app.CreateAppGrant{AppID: req.AppId, SpaceID: req.Body.SpaceId, Level: authz.Level(req.Body.Level)}
	if req.Body.ChannelId != nil {
		cmd.ChannelID = *req.Body.ChannelId
	}
	g, err := h.svc.CreateAppGrant(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return api.CreateAppGrant201JSONResponse{Body: toGrant(req.AppId, g)}, nil
}

// DeleteAppGrant implements deleteAppGrant.
func (h *Handlers) DeleteAppGrant(ctx context.Context, req api.DeleteAppGrantRequestObject) (api.DeleteAppGrantResponseObject, error) {
	if err := h.svc.DeleteAppGrant(ctx, req.AppId, req.GrantId); err != nil {
		return nil, err
	}
	return api.DeleteAppGrant204Response{}, nil
}

// toGrant renders a grant of the app appID; a space-wide grant has no
// channel_id.
func toGrant(appID ids.ID, g authz.Grant) api.Grant {
	out := api.Grant{Id: g.ID, AppId: appID, SpaceId: g.SpaceID, Level: api.Level(g.Level), CreatedAt: g.CreatedAt}
	if !g.ChannelID.IsZero() {
		c := g.ChannelID
		out.ChannelId = &c
	}
	return out
}
