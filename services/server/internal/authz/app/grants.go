package app

import (
	"context"
	"crypto/rand"
	"errors"

	"bothy/server/internal/authz"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/kernel/watched"
)

// Grants implements authz.Grants over a GrantStore. It validates input and
// stamps new grants; it does not authorize (the calling use case has).
type Grants struct {
	store   GrantStore
	clock   clock.Clock
	changes *watched.Hub
}

var _ authz.Grants = (*Grants)(nil)

// NewGrants returns the grants service. Every grant and revocation is
// reported to changes at its commit, so the caches of the process forget
// the subject's standing (ADR 0103); nil reports to nobody. It returns an
// error for a nil store or clock.
func NewGrants(store GrantStore, clk clock.Clock, changes *watched.Hub) (*Grants, error) {
	if store == nil || clk == nil {
		return nil, errors.New("authz: NewGrants needs a store and a clock")
	}
	return &Grants{store: store, clock: clk, changes: changes}, nil
}

// Grant implements authz.Grants. A Zero SubjectID or CreatedBy is the
// caller's bug (internal error); input defects give validation_failed with
// /level (enum) and /space_id (required) and change nothing.
func (g *Grants) Grant(ctx context.Context, in authz.NewGrant) (authz.Grant, error) {
	if in.SubjectID.IsZero() || in.CreatedBy.IsZero() {
		return authz.Grant{}, errs.Internalf("authz: a grant needs a subject and a creator")
	}
	var fields []errs.FieldError
	if !in.Level.Valid() {
		fields = append(fields, errs.Field("/level", "enum"))
	}
	if in.SpaceID.IsZero() {
		fields = append(fields, errs.Field("/space_id", "required"))
	}
	if len(fields) > 0 {
		return authz.Grant{}, errs.Validation(fields...)
	}
	now := clock.Stamp(g.clock)
	id, err := ids.NewAt(now, rand.Reader)
	if err != nil {
		return authz.Grant{}, errs.Wrap(err, "authz: grant ID")
	}
	out := authz.Grant{ID: id, SubjectID: in.SubjectID, Level: in.Level, SpaceID: in.SpaceID,
		ChannelID: in.ChannelID, CreatedBy: in.CreatedBy, CreatedAt: now}
	g.changes.ChangedAtCommit(ctx, in.SubjectID)
	if err := g.store.InsertGrant(ctx, out); err != nil {
		return authz.Grant{}, err
	}
	return out, nil
}

// Revoke implements authz.Grants.
func (g *Grants) Revoke(ctx context.Context, subjectID, grantID ids.ID) error {
	g.changes.ChangedAtCommit(ctx, subjectID)
	found, err := g.store.DeleteGrant(ctx, subjectID, grantID)
	if err != nil {
		return err
	}
	if !found {
		return errs.NotFound()
	}
	return nil
}

// ListForPrincipal implements authz.Grants.
func (g *Grants) ListForPrincipal(ctx context.Context, subjectID ids.ID) ([]authz.Grant, error) {
	return g.store.ListGrants(ctx, subjectID)
}
