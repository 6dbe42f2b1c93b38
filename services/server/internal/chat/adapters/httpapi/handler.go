// Package httpapi serves the chat operations of the HTTP API (listSpaces,
// createSpace, addSpaceMember, listChannels, createChannel, listMessages,
// postMessage, updateMessage, deleteMessage) as methods of the generated
// strict server (services/server/api). The role assembly embeds Handler in
// the server value it passes to api.NewStrictHandlerWithOptions.
//
// A method translates the request into a use case of internal/chat/app and
// its result into the response model; every error is returned as is (an
// *errs.Error) and written as a problem by the strict server's error
// handler, so the mapping to HTTP stays in platform/httpserver.
package httpapi

import (
	"context"
	"errors"

	"bothy/server/api"
	"bothy/server/internal/chat/app"
	"bothy/server/internal/chat/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/platform/httpserver"
)

// opListMessages is the operation ID cursors of listMessages are bound to.
const opListMessages = "listMessages"

// Handler implements the chat methods of api.StrictServerInterface.
type Handler struct {
	chat    *app.Service
	cursors *httpserver.Cursors
}

// NewHandler returns the handler over the chat use cases; cursors encodes
// and decodes the page cursors of listMessages. It returns an error for a
// nil dependency.
func NewHandler(chat *app.Service, cursors *httpserver.Cursors) (*Handler, error) {
	if chat == nil || cursors == nil {
		return nil, errors.New("chat: httpapi.NewHandler needs the chat service and a cursor codec")
	}
	return &Handler{chat: chat, cursors: cursors}, nil
}

func spaceOf(s domain.Space) api.Space {
	return api.Space{Id: s.ID, Name: s.Name, CreatedAt: s.CreatedAt}
}

func channelOf(c domain.Channel) api.Channel {
	return api.Channel{Id: c.ID, SpaceId: c.SpaceID, Name: c.Name, CreatedAt: c.CreatedAt}
}

// messageOf leaves thread_id and updated_at out when they have no value
// (never null, ADR 0053).
func messageOf(m domain.Message) api.Message {
	out := api.Message{Id: m.ID, ChannelId: m.ChannelID, AuthorId: m.AuthorID, Text: m.Text, CreatedAt: m.CreatedAt}
	if !m.ThreadID.IsZero() {
		thread := m.ThreadID
		out.ThreadId = &thread
	}
	if !m.UpdatedAt.IsZero() {
		updated := m.UpdatedAt
		out.UpdatedAt = &updated
	}
	return out
}

// ListSpaces implements api.StrictServerInterface.
func (h *Handler) ListSpaces(ctx context.Context, _ api.ListSpacesRequestObject) (api.ListSpacesResponseObject, error) {
	spaces, err := h.chat.ListSpaces(ctx)
	if err != nil {
		return nil, err
	}
	out := api.ListSpaces200JSONResponse{Items: make([]api.Space, 0, len(spaces))}
	for _, s := range spaces {
		out.Items = append(out.Items, spaceOf(s))
	}
	return out, nil
}

// CreateSpace implements api.StrictServerInterface.
func (h *Handler) CreateSpace(ctx context.Context, req api.CreateSpaceRequestObject) (api.CreateSpaceResponseObject, error) {
	s, err := h.chat.CreateSpace(ctx, app.CreateSpace{Name: req.Body.Name})
	if err != nil {
		return nil, err
	}
	return api.CreateSpace201JSONResponse{Body: spaceOf(s)}, nil
}

// AddSpaceMember implements api.StrictServerInterface.
func (h *Handler) AddSpaceMember(ctx context.Context, req api.AddSpaceMemberRequestObject) (api.AddSpaceMemberResponseObject, error) {
	m, err := h.chat.AddSpaceMember(ctx, app.AddSpaceMember{SpaceID: req.SpaceId, PersonID: req.Body.PersonId,
		Level: domain.Level(req.Body.Level)})
	if err != nil {
		return nil, err
	}
	return api.AddSpaceMember201JSONResponse{Body: api.SpaceMember{SpaceId: m.SpaceID, PersonId: m.PersonID,
		Level: api.Level(m.Level), CreatedAt: m.CreatedAt}}, nil
}

// ListChannels implements api.StrictServerInterface.
func (h *Handler) ListChannels(ctx context.Context, req api.ListChannelsRequestObject) (api.ListChannelsResponseObject, error) {
	channels, err := h.chat.ListChannels(ctx, req.SpaceId)
	if err != nil {
		return nil, err
	}
	out := api.ListChannels200JSONResponse{Items: make([]api.Channel, 0, len(channels))}
	for _, c := range channels {
		out.Items = append(out.Items, channelOf(c))
	}
	return out, nil
}

// CreateChannel implements api.StrictServerInterface.
func (h *Handler) CreateChannel(ctx context.Context, req api.CreateChannelRequestObject) (api.CreateChannelResponseObject, error) {
	c, err := h.chat.CreateChannel(ctx, app.CreateChannel{SpaceID: req.SpaceId, Name: req.Body.Name})
	if err != nil {
		return nil, err
	}
	return api.CreateChannel201JSONResponse{Body: channelOf(c)}, nil
}

// ListMessages implements api.StrictServerInterface. The cursor is the
// codec's encoding of domain.Position, bound to the operation and the
// principal, so a cursor of another principal or a tampered one answers
// 400 cursor_invalid.
func (h *Handler) ListMessages(ctx context.Context, req api.ListMessagesRequestObject) (api.ListMessagesResponseObject, error) {
	principal := actor.From(ctx).ID
	q := app.ListMessages{ChannelID: req.ChannelId}
	if req.Params.Cursor != nil {
		var pos domain.Position
		if err := h.cursors.Decode(opListMessages, principal, *req.Params.Cursor, &pos); err != nil {
			return nil, err
		}
		q.Before = &pos
	}
	if req.Params.Limit != nil {
		q.Limit = int(*req.Params.Limit)
	}
	page, err := h.chat.ListMessages(ctx, q)
	if err != nil {
		return nil, err
	}
	out := api.ListMessages200JSONResponse{Items: make([]api.Message, 0, len(page.Items))}
	for _, m := range page.Items {
		out.Items = append(out.Items, messageOf(m))
	}
	if page.Next != nil {
		cursor, err := h.cursors.Encode(opListMessages, principal, *page.Next)
		if err != nil {
			return nil, err
		}
		out.NextCursor = &cursor
	}
	return out, nil
}

// PostMessage implements api.StrictServerInterface.
func (h *Handler) PostMessage(ctx context.Context, req api.PostMessageRequestObject) (api.PostMessageResponseObject, error) {
	cmd := app.PostMessage{ChannelID: req.ChannelId, Text: req.Body.Text}
	if req.Body.ThreadId != nil {
		cmd.ThreadID = *req.Body.ThreadId
	}
	if req.Body.StartThread != nil {
		cmd.StartThread = *req.Body.StartThread
	}
	posted, err := h.chat.PostMessage(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return api.PostMessage201JSONResponse{Body: messageOf(posted.Message)}, nil
}

// UpdateMessage implements api.StrictServerInterface.
func (h *Handler) UpdateMessage(ctx context.Context, req api.UpdateMessageRequestObject) (api.UpdateMessageResponseObject, error) {
	m, err := h.chat.UpdateMessage(ctx, app.UpdateMessage{MessageID: req.MessageId, Text: req.Body.Text})
	if err != nil {
		return nil, err
	}
	return api.UpdateMessage200JSONResponse{Body: messageOf(m)}, nil
}

// DeleteMessage implements api.StrictServerInterface.
func (h *Handler) DeleteMessage(ctx context.Context, req api.DeleteMessageRequestObject) (api.DeleteMessageResponseObject, error) {
	if err := h.chat.DeleteMessage(ctx, req.MessageId); err != nil {
		return nil, err
	}
	return api.DeleteMessage204Response{}, nil
}
