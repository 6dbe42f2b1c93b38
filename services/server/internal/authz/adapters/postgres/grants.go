// Package postgres is the PostgreSQL adapter of the authorization module:
// the grants table (migration 00030) behind app.GrantStore. Queries are
// sqlc code (queries/grants.sql, generated into db/, ADR 0078); every query
// runs through pg.Conn, so it joins the unit of work of the context.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/adapters/postgres/db"
	"bothy/server/internal/authz/app"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
)

// Grants stores grants in the table grants.
type Grants struct {
	pool *pgxpool.Pool
}

var _ app.GrantStore = (*Grants)(nil)

// NewGrants returns the store over pool (bothy_app). It panics on a nil
// pool, because that is a wiring bug.
func NewGrants(pool *pgxpool.Pool) *Grants {
	if pool == nil {
		panic("authz: NewGrants needs a pool")
	}
	return &Grants{pool: pool}
}

// q returns the sqlc queries on the ambient unit of work of ctx, or on the
// pool.
func (s *Grants) q(ctx context.Context) *db.Queries { return db.New(pg.Conn(ctx, s.pool)) }

// GrantFactsOf implements app.GrantStore with one statement over the
// leading column of grants_subject_place_key.
func (s *Grants) GrantFactsOf(ctx context.Context, principalIDs []ids.ID) (map[ids.ID][]domain.GrantFact, error) {
	out := make(map[ids.ID][]domain.GrantFact, len(principalIDs))
	for _, id := range principalIDs {
		out[id] = []domain.GrantFact{}
	}
	if len(principalIDs) == 0 {
		return out, nil
	}
	rows, err := s.q(ctx).GrantFactsBySubjects(ctx, principalIDs)
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: grant facts: %w", err), "authz: loading grants failed")
	}
	for _, r := range rows {
		out[r.SubjectPrincipalID] = append(out[r.SubjectPrincipalID],
			domain.GrantFact{SpaceID: r.SpaceID, ChannelID: r.ChannelID, Level: authz.Level(r.Level)})
	}
	return out, nil
}

// HoldersIn implements app.GrantStore through grants_place_idx (migration
// 00045), one indexed read per place, and the holders' grants through
// grants_subject_place_key, in one statement.
func (s *Grants) HoldersIn(ctx context.Context, places []domain.Place) (app.Holders, error) {
	out := app.Holders{ByPlace: make(map[domain.Place][]ids.ID, len(places)), Facts: map[ids.ID][]domain.GrantFact{}}
	if len(places) == 0 {
		return out, nil
	}
	var unique []domain.Place
	var spaces, channels []ids.ID
	for _, p := range places {
		if _, seen := out.ByPlace[p]; !seen {
			out.ByPlace[p] = []ids.ID{}
			unique = append(unique, p)
			spaces, channels = append(spaces, p.Space), append(channels, p.Channel)
		}
	}
	rows, err := s.q(ctx).GrantHoldersByPlaces(ctx, db.GrantHoldersByPlacesParams{SpaceIds: spaces, ChannelIds: channels})
	if err != nil {
		return app.Holders{}, errs.Wrap(fmt.Errorf("authz: grant holders: %w", err), "authz: loading grant holders failed")
	}
	for _, r := range rows {
		if r.Place == 0 {
			// A grant of a holder (the rows of place 0, D-M2-26-81).
			out.Facts[r.SubjectPrincipalID] = append(out.Facts[r.SubjectPrincipalID],
				domain.GrantFact{SpaceID: r.SpaceID, ChannelID: r.ChannelID, Level: authz.Level(*r.Level)})
			continue
		}
		p := unique[r.Place-1]
		out.ByPlace[p] = append(out.ByPlace[p], r.SubjectPrincipalID)
	}
	return out, nil
}

// InsertGrant implements app.GrantStore, translating the constraints of
// the table into the errors the port documents.
func (s *Grants) InsertGrant(ctx context.Context, g authz.Grant) error {
	err := s.q(ctx).GrantInsert(ctx, db.GrantInsertParams{
		ID: g.ID, SubjectPrincipalID: g.SubjectID, Level: string(g.Level), SpaceID: g.SpaceID, ChannelID: g.ChannelID,
		CreatedBy: g.CreatedBy, CreatedAt: g.CreatedAt,
	})
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case pg.IsUniqueViolation(err, "grants_subject_place_key"):
		return errs.Conflict("grant_exists")
	case pg.IsForeignKeyViolation(err, "grants_subject_principal_id_fkey"):
		return errs.NotFound()
	case pg.IsForeignKeyViolation(err, "grants_space_id_fkey"):
		return errs.Validation(errs.Field("/space_id", "not_found"))
	case pg.IsForeignKeyViolation(err, "grants_channel_fkey"):
		return errs.Validation(errs.Field("/channel_id", "not_found"))
	case errors.As(err, &pgErr) && pgErr.Code == "23514":
		return errs.Validation(errs.Field("/level", "enum"))
	default:
		return errs.Wrap(fmt.Errorf("authz: insert grant: %w", err), "authz: storing the grant failed")
	}
}

// DeleteGrant implements app.GrantStore.
func (s *Grants) DeleteGrant(ctx context.Context, subjectID, grantID ids.ID) (bool, error) {
	n, err := s.q(ctx).GrantDelete(ctx, db.GrantDeleteParams{ID: grantID, SubjectPrincipalID: subjectID})
	if err != nil {
		return false, errs.Wrap(fmt.Errorf("authz: delete grant: %w", err), "authz: revoking the grant failed")
	}
	return n == 1, nil
}

// ListGrants implements app.GrantStore.
func (s *Grants) ListGrants(ctx context.Context, subjectID ids.ID) ([]authz.Grant, error) {
	rows, err := s.q(ctx).GrantListBySubject(ctx, subjectID)
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: list grants: %w", err), "authz: listing grants failed")
	}
	out := make([]authz.Grant, 0, len(rows))
	for _, r := range rows {
		out = append(out, authz.Grant{ID: r.ID, SubjectID: r.SubjectPrincipalID, Level: authz.Level(r.Level), SpaceID: r.SpaceID,
			ChannelID: r.ChannelID, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC()})
	}
	return out, nil
}
