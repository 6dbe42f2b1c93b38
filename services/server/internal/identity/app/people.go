package app

import (
	"context"
	"io"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/txn"
)

// CreatePerson is the input of Service.CreatePerson and
// Bootstrap.CreateOwner.
type CreatePerson struct {
	// Email is normalized (domain.NormalizeEmail); pointer /email.
	Email string
	// DisplayName is 1 to domain.MaxNameLength characters; pointer
	// /display_name.
	DisplayName string
	// Password has at least identity.password_min_length characters;
	// pointer /password. Only its argon2id hash is stored.
	Password string
	// Role is owner or member; empty means member. Bootstrap.CreateOwner
	// ignores it.
	Role actor.Role
}

// CreatePerson lets an owner create a person (identity.person.manage:
// owner only, with a fresh step-up). The password is hashed before the unit
// of work, so the transaction never waits for argon2id. The change is
// audited with the person's ID and role, never the email.
//
// Errors: what the authorizer answers (not_found for a member or a personal
// token, step_up_required); validation_failed with pointers /email,
// /display_name, /password, /role; conflict with reason email_taken.
func (s *Service) CreatePerson(ctx context.Context, in CreatePerson) (Person, error) {
	if err := s.check(ctx, authorize.PersonManage, authorize.Resource{Kind: authorize.KindPerson}); err != nil {
		return Person{}, err
	}
	if in.Role == "" {
		in.Role = actor.RoleMember
	}
	return s.createPerson(ctx, actor.From(ctx), in)
}

// Bootstrap creates people without a principal: the first owner, from the
// command line (`bothy owner create`). The operator who runs it already
// holds the database credentials, so no authorization applies; the audit
// entry names the system as the actor.
type Bootstrap struct {
	core
}

// NewBootstrap returns a Bootstrap; o needs PasswordMinLength and
// PasswordParams (SessionTTL is not used but must be valid). It returns an
// error for invalid Options and panics on a missing dependency. random may
// be nil (crypto/rand).
func NewBootstrap(uow txn.UnitOfWork, store Store, audit auditing.Recorder, clk clock.Clock, random io.Reader, o Options) (*Bootstrap, error) {
	c, err := newCore(uow, store, audit, clk, random, o)
	if err != nil {
		return nil, err
	}
	return &Bootstrap{core: c}, nil
}

// CountOwners returns how many people have the role owner, so the local
// start (`make run`) shows how to create the first owner only while there
// is none. It fails only when the database does.
func (b *Bootstrap) CountOwners(ctx context.Context) (int, error) {
	return b.store.CountOwners(ctx)
}

// CreateOwner creates a person with the role owner. Errors as for
// Service.CreatePerson, without the authorization errors.
func (b *Bootstrap) CreateOwner(ctx context.Context, in CreatePerson) (Person, error) {
	in.Role = actor.RoleOwner
	return b.createPerson(ctx, actor.System, in)
}

func (c *core) createPerson(ctx context.Context, by actor.Principal, in CreatePerson) (Person, error) {
	var fields []errs.FieldError
	collect := func(err error) {
		if e, ok := errs.As(err); ok {
			fields = append(fields, e.Fields...)
		}
	}
	email, err := domain.NormalizeEmail("/email", in.Email)
	collect(err)
	name, err := domain.NormalizeName("/display_name", in.DisplayName)
	collect(err)
	collect(domain.CheckPassword("/password", in.Password, c.opts.PasswordMinLength))
	if in.Role != actor.RoleOwner && in.Role != actor.RoleMember {
		fields = append(fields, errs.Field("/role", "invalid_role"))
	}
	if len(fields) > 0 {
		return Person{}, errs.Validation(fields...)
	}
	hash, err := domain.HashPassword(in.Password, c.opts.PasswordParams, c.random)
	if err != nil {
		return Person{}, errs.Wrap(err, "identity: hashing the password failed")
	}
	var p Person
	err = c.uow.Do(ctx, func(ctx context.Context) error {
		now := c.clock.Now()
		id, err := c.newID(now)
		if err != nil {
			return err
		}
		p = Person{ID: id, Email: email, DisplayName: name, Role: in.Role, CreatedAt: now}
		if err := c.store.CreatePerson(ctx, p, hash); err != nil {
			return err
		}
		return c.audit.Record(ctx, auditing.Entry{
			Action:       string(authorize.PersonManage),
			Actor:        by,
			ResourceKind: string(authorize.KindPerson),
			ResourceID:   p.ID,
			Outcome:      auditing.Allow,
			Details:      []auditing.Detail{auditing.Code("change", "created"), auditing.Code("role", string(p.Role))},
		})
	})
	if err != nil {
		return Person{}, err
	}
	return p, nil
}
