// Package postgres is the PostgreSQL adapter of the authorization module:
// the grants table (migration 00030) behind app.GrantStore. Every query runs
// through pg.Conn, so it joins the unit of work of the context.
package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/authz"
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

// GrantFacts implements app.GrantStore with one index scan on the leading
// column of grants_subject_place_key.
func (s *Grants) GrantFacts(ctx context.Context, principalID ids.ID) ([]domain.GrantFact, error) {
	rows, err := pg.Conn(ctx, s.pool).Query(ctx,
		`SELECT space_id, channel_id, level FROM grants WHERE subject_principal_id = $1`, principalID)
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: grant facts: %w", err), "authz: loading grants failed")
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.GrantFact, error) {
		var f domain.GrantFact
		var level string
		err := row.Scan(&f.SpaceID, &f.ChannelID, &level)
		f.Level = authz.Level(level)
		return f, err
	})
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: grant facts: %w", err), "authz: loading grants failed")
	}
	return out, nil
}

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
	rows, err := pg.Conn(ctx, s.pool).Query(ctx,
		`SELECT subject_principal_id, space_id, channel_id, level FROM grants WHERE subject_principal_id = ANY($1)`, principalIDs)
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: grant facts: %w", err), "authz: loading grants failed")
	}
	defer rows.Close()
	for rows.Next() {
		var subject ids.ID
		var f domain.GrantFact
		var level string
		if err := rows.Scan(&subject, &f.SpaceID, &f.ChannelID, &level); err != nil {
			return nil, errs.Wrap(fmt.Errorf("authz: grant facts: %w", err), "authz: loading grants failed")
		}
		f.Level = authz.Level(level)
		out[subject] = append(out[subject], f)
	}
	if err := rows.Err(); err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: grant facts: %w", err), "authz: loading grants failed")
	}
	return out, nil
}

// HoldersIn implements app.GrantStore through grants_place_idx (migration
// 00045).
func (s *Grants) HoldersIn(ctx context.Context, space, channel ids.ID) ([]ids.ID, error) {
	rows, err := pg.Conn(ctx, s.pool).Query(ctx, `SELECT DISTINCT subject_principal_id FROM grants
		WHERE space_id = $1 AND ($2::uuid IS NULL OR channel_id IS NULL OR channel_id = $2)
		ORDER BY subject_principal_id`, space, channel)
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: grant holders: %w", err), "authz: loading grant holders failed")
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[ids.ID])
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: grant holders: %w", err), "authz: loading grant holders failed")
	}
	return out, nil
}

// InsertGrant implements app.GrantStore, translating the constraints of
// the table into the errors the port documents.
func (s *Grants) InsertGrant(ctx context.Context, g authz.Grant) error {
	_, err := pg.Conn(ctx, s.pool).Exec(ctx, `
		INSERT INTO grants (id, subject_principal_id, level, space_id, channel_id, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		g.ID, g.SubjectID, string(g.Level), g.SpaceID, g.ChannelID, g.CreatedBy, g.CreatedAt)
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
	tag, err := pg.Conn(ctx, s.pool).Exec(ctx,
		`DELETE FROM grants WHERE id = $1 AND subject_principal_id = $2`, grantID, subjectID)
	if err != nil {
		return false, errs.Wrap(fmt.Errorf("authz: delete grant: %w", err), "authz: revoking the grant failed")
	}
	return tag.RowsAffected() == 1, nil
}

// ListGrants implements app.GrantStore.
func (s *Grants) ListGrants(ctx context.Context, subjectID ids.ID) ([]authz.Grant, error) {
	rows, err := pg.Conn(ctx, s.pool).Query(ctx, `
		SELECT id, subject_principal_id, level, space_id, channel_id, created_by, created_at
		FROM grants WHERE subject_principal_id = $1 ORDER BY created_at, id`, subjectID)
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: list grants: %w", err), "authz: listing grants failed")
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (authz.Grant, error) {
		var g authz.Grant
		var level string
		err := row.Scan(&g.ID, &g.SubjectID, &level, &g.SpaceID, &g.ChannelID, &g.CreatedBy, &g.CreatedAt)
		g.Level = authz.Level(level)
		g.CreatedAt = g.CreatedAt.UTC()
		return g, err
	})
	if err != nil {
		return nil, errs.Wrap(fmt.Errorf("authz: list grants: %w", err), "authz: listing grants failed")
	}
	if out == nil {
		out = []authz.Grant{}
	}
	return out, nil
}
