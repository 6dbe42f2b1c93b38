// Package httpapi serves the identity module's operations of the HTTP API
// (the Identity group of api/openapi.yaml): createSession, deleteSession,
// stepUpSession, getMe, listPersonalTokens, createPersonalToken,
// revokePersonalToken and createPerson, as methods of the generated strict
// server (bothy/server/api). The role assembly embeds *Server in the value
// that implements api.StrictServerInterface. Errors go back to the strict
// handler, whose error function (the problem writer of platform/httpserver)
// maps them to problem documents.
package httpapi

import (
	"context"

	"bothy/server/api"
	"bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// UseCases are the identity use cases the handlers call; *app.Service
// implements them.
type UseCases interface {
	SignIn(ctx context.Context, in app.SignIn) (app.NewSession, error)
	SignOut(ctx context.Context) error
	StepUp(ctx context.Context, in app.StepUp) (app.Session, error)
	Me(ctx context.Context) (app.Me, error)
	ListPersonalTokens(ctx context.Context) ([]app.PersonalToken, error)
	CreatePersonalToken(ctx context.Context, in app.CreatePersonalToken) (app.NewPersonalToken, error)
	RevokePersonalToken(ctx context.Context, id ids.ID) error
	CreatePerson(ctx context.Context, in app.CreatePerson) (app.Person, error)
}

var _ UseCases = (*app.Service)(nil)

// Server implements the Identity methods of api.StrictServerInterface.
type Server struct {
	uc UseCases
}

// New returns the Server over uc. It panics on a nil uc (a wiring bug).
func New(uc UseCases) *Server {
	if uc == nil {
		panic("identity: httpapi.New needs the use cases")
	}
	return &Server{uc: uc}
}

// errNoBody answers a request whose required body the validator let
// through empty; the validator normally rejects it first.
func errNoBody() error { return errs.Validation(errs.Field("", "required")) }

// CreateSession serves createSession (sign in): 201 with the session and
// its token, shown once.
func (s *Server) CreateSession(ctx context.Context, r api.CreateSessionRequestObject) (api.CreateSessionResponseObject, error) {
	if r.Body == nil {
		return nil, errNoBody()
	}
	out, err := s.uc.SignIn(ctx, app.SignIn{Email: r.Body.Email, Password: r.Body.Password})
	if err != nil {
		return nil, err
	}
	return api.CreateSession201JSONResponse{Session: session(out.Session), Token: out.Token}, nil
}

// DeleteSession serves deleteSession (sign out): 204.
func (s *Server) DeleteSession(ctx context.Context, _ api.DeleteSessionRequestObject) (api.DeleteSessionResponseObject, error) {
	if err := s.uc.SignOut(ctx); err != nil {
		return nil, err
	}
	return api.DeleteSession204Response{}, nil
}

// StepUpSession serves stepUpSession: 200 with the session and its new
// step-up time.
func (s *Server) StepUpSession(ctx context.Context, r api.StepUpSessionRequestObject) (api.StepUpSessionResponseObject, error) {
	if r.Body == nil {
		return nil, errNoBody()
	}
	out, err := s.uc.StepUp(ctx, app.StepUp{Password: r.Body.Password})
	if err != nil {
		return nil, err
	}
	return api.StepUpSession200JSONResponse(session(out)), nil
}

// GetMe serves getMe: the person the request is authenticated as.
func (s *Server) GetMe(ctx context.Context, _ api.GetMeRequestObject) (api.GetMeResponseObject, error) {
	me, err := s.uc.Me(ctx)
	if err != nil {
		return nil, err
	}
	return api.GetMe200JSONResponse(person(me.Person)), nil
}

// ListPersonalTokens serves listPersonalTokens: the active tokens, newest
// first, never their values.
func (s *Server) ListPersonalTokens(ctx context.Context, _ api.ListPersonalTokensRequestObject) (api.ListPersonalTokensResponseObject, error) {
	tokens, err := s.uc.ListPersonalTokens(ctx)
	if err != nil {
		return nil, err
	}
	out := api.PersonalTokenList{Items: make([]api.PersonalToken, len(tokens))}
	for i, t := range tokens {
		out.Items[i] = personalToken(t)
	}
	return api.ListPersonalTokens200JSONResponse(out), nil
}

// CreatePersonalToken serves createPersonalToken: 201 with the token's
// value shown once (the use case marks the one-time secret, so a replay
// answers 409 conflict one_time_secret).
func (s *Server) CreatePersonalToken(ctx context.Context, r api.CreatePersonalTokenRequestObject) (api.CreatePersonalTokenResponseObject, error) {
	if r.Body == nil {
		return nil, errNoBody()
	}
	in := app.CreatePersonalToken{Name: r.Body.Name}
	if r.Body.ExpiresAt != nil {
		in.ExpiresAt = *r.Body.ExpiresAt
	}
	out, err := s.uc.CreatePersonalToken(ctx, in)
	if err != nil {
		return nil, err
	}
	return api.CreatePersonalToken201JSONResponse{Body: api.PersonalTokenCreated{Token: personalToken(out.PersonalToken), Secret: out.Token}}, nil
}

// RevokePersonalToken serves revokePersonalToken: 204.
func (s *Server) RevokePersonalToken(ctx context.Context, r api.RevokePersonalTokenRequestObject) (api.RevokePersonalTokenResponseObject, error) {
	if err := s.uc.RevokePersonalToken(ctx, r.TokenId); err != nil {
		return nil, err
	}
	return api.RevokePersonalToken204Response{}, nil
}

// CreatePerson serves createPerson: 201 with the new person.
func (s *Server) CreatePerson(ctx context.Context, r api.CreatePersonRequestObject) (api.CreatePersonResponseObject, error) {
	if r.Body == nil {
		return nil, errNoBody()
	}
	in := app.CreatePerson{Email: r.Body.Email, DisplayName: r.Body.DisplayName, Password: r.Body.Password}
	if r.Body.Role != nil {
		in.Role = actor.Role(*r.Body.Role)
	}
	p, err := s.uc.CreatePerson(ctx, in)
	if err != nil {
		return nil, err
	}
	return api.CreatePerson201JSONResponse{Body: person(p)}, nil
}

func session(s app.Session) api.Session {
	out := api.Session{Id: s.ID, PersonId: s.PersonID, CreatedAt: s.CreatedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC()}
	if !s.SteppedUpAt.IsZero() {
		at := s.SteppedUpAt.UTC()
		out.StepUpAt = &at
	}
	return out
}

func person(p app.Person) api.Person {
	return api.Person{Id: p.ID, Email: p.Email, DisplayName: p.DisplayName, Role: api.PersonRole(p.Role), CreatedAt: p.CreatedAt.UTC()}
}

func personalToken(t app.PersonalToken) api.PersonalToken {
	out := api.PersonalToken{Id: t.ID, Name: t.Name, CreatedAt: t.CreatedAt.UTC()}
	if !t.ExpiresAt.IsZero() {
		at := t.ExpiresAt.UTC()
		out.ExpiresAt = &at
	}
	return out
}
