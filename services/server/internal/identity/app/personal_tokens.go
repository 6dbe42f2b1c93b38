package app

import (
	"context"
	"time"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/kernel/ids"
)

// CreatePersonalToken is the input of Service.CreatePersonalToken.
type CreatePersonalToken struct {
	// Name labels the token for its holder; pointer /name.
	Name string
	// ExpiresAt ends the token; zero for never. It must lie in the future;
	// pointer /expires_at.
	ExpiresAt time.Time
}

// NewPersonalToken is a personal token with its secret, shown once.
type NewPersonalToken struct {
	// PersonalToken is the stored token.
	PersonalToken PersonalToken
	// Token is the bearer token ("btp_..."); only its hash is stored.
	Token string
}

// CreatePersonalToken creates a personal token for the person who asks
// (identity.token.manage, self, persons only). The answer holds a one-time
// secret, so it calls idempotency.MarkOneTimeSecret: a replay of the
// request never returns the token again (R-API-26). Audited with the
// token's and the person's IDs, never the token.
//
// Errors: what the authorizer answers; not_found for a principal that is
// no person; validation_failed with pointers /name and /expires_at.
func (s *Service) CreatePersonalToken(ctx context.Context, in CreatePersonalToken) (NewPersonalToken, error) {
	p := actor.From(ctx)
	if err := s.check(ctx, authorize.PersonalTokenManage, authorize.Resource{Kind: authorize.KindPersonalToken, Owner: p.ID}); err != nil {
		return NewPersonalToken{}, err
	}
	if p.Kind != actor.KindPerson {
		return NewPersonalToken{}, errs.NotFound()
	}
	var fields []errs.FieldError
	name, err := domain.NormalizeName("/name", in.Name)
	if e, ok := errs.As(err); ok {
		fields = append(fields, e.Fields...)
	}
	if !in.ExpiresAt.IsZero() && !in.ExpiresAt.After(s.clock.Now()) {
		fields = append(fields, errs.Field("/expires_at", "not_in_future"))
	}
	if len(fields) > 0 {
		return NewPersonalToken{}, errs.Validation(fields...)
	}
	token, hash, err := domain.NewToken(domain.TokenPersonal, s.random)
	if err != nil {
		return NewPersonalToken{}, errs.Wrap(err, "identity: making a token failed")
	}
	var out NewPersonalToken
	err = s.uow.Do(ctx, func(ctx context.Context) error {
		now := s.clock.Now()
		id, err := s.newID(now)
		if err != nil {
			return err
		}
		pt := PersonalToken{ID: id, PersonID: p.ID, Name: name, CreatedAt: now}
		if !in.ExpiresAt.IsZero() {
			pt.ExpiresAt = in.ExpiresAt.UTC()
		}
		if err := s.store.CreatePersonalToken(ctx, pt, hash); err != nil {
			return err
		}
		if err := s.audit.Record(ctx, tokenEntry(p, pt, "created")); err != nil {
			return err
		}
		out = NewPersonalToken{PersonalToken: pt, Token: token}
		return nil
	})
	if err != nil {
		return NewPersonalToken{}, err
	}
	idempotency.MarkOneTimeSecret(ctx)
	return out, nil
}

// ListPersonalTokens lists the active personal tokens of the person who
// asks, newest first, without their secrets (identity.token.read, self).
// Errors: what the authorizer answers; not_found for a principal that is no
// person.
func (s *Service) ListPersonalTokens(ctx context.Context) ([]PersonalToken, error) {
	p := actor.From(ctx)
	if err := s.check(ctx, authorize.PersonalTokenRead, authorize.Resource{Kind: authorize.KindPersonalToken, Owner: p.ID}); err != nil {
		return nil, err
	}
	if p.Kind != actor.KindPerson {
		return nil, errs.NotFound()
	}
	return s.store.ActivePersonalTokens(ctx, p.ID, s.clock.Now())
}

// RevokePersonalToken revokes the personal token id of the person who asks
// (identity.token.manage, self); the token stops working at once. Another
// person's token answers exactly like an unknown one. Audited.
//
// Errors: not_found for an unknown, foreign, expired or already revoked
// token; what the authorizer answers.
func (s *Service) RevokePersonalToken(ctx context.Context, id ids.ID) error {
	p := actor.From(ctx)
	pt, ok, err := s.store.ActivePersonalToken(ctx, id, s.clock.Now())
	if err != nil {
		return err
	}
	if !ok {
		return errs.NotFound()
	}
	// Authorize outside the unit of work, so a denial the authorizer
	// records is not rolled back with it.
	if err := s.check(ctx, authorize.PersonalTokenManage, authorize.Resource{Kind: authorize.KindPersonalToken, ID: pt.ID, Owner: pt.PersonID}); err != nil {
		return err
	}
	if p.Kind != actor.KindPerson || p.ID != pt.PersonID {
		return errs.NotFound()
	}
	return s.uow.Do(ctx, func(ctx context.Context) error {
		ok, err := s.store.RevokePersonalToken(ctx, pt.ID, s.clock.Now())
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		s.forgetTokensAfterCommit(ctx, pt.PersonID)
		return s.audit.Record(ctx, tokenEntry(p, pt, "revoked"))
	})
}

func tokenEntry(p actor.Principal, pt PersonalToken, change string) auditing.Entry {
	return auditing.Entry{
		Action:       string(authorize.PersonalTokenManage),
		Actor:        p,
		ResourceKind: string(authorize.KindPersonalToken),
		ResourceID:   pt.ID,
		Outcome:      auditing.Allow,
		Details: []auditing.Detail{
			auditing.Code("change", change),
			auditing.ID("person_id", pt.PersonID),
			auditing.Bool("expires", !pt.ExpiresAt.IsZero()),
		},
	}
}
