// Package postgres stores the identity module's data in PostgreSQL: the
// tables principals, people and agents (migration 00010), sessions
// (00013), personal_tokens (00014) and app_tokens (00015). It implements
// app.Store. Queries are sqlc code (queries/*.sql, generated into db/,
// ADR 0078); every query joins the unit of work of the context (pg.Conn).
// Tokens are stored and looked up only by their SHA-256.
package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/identity/adapters/postgres/db"
	"bothy/server/internal/identity/app"
	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/pg"
)

// Store implements app.Store.
type Store struct {
	pool *pgxpool.Pool
}

var _ app.Store = (*Store)(nil)

// New returns a Store over pool (connected as bothy_app). It panics on a
// nil pool (a wiring bug).
func New(pool *pgxpool.Pool) *Store {
	if pool == nil {
		panic("identity: postgres.New needs a pool")
	}
	return &Store{pool: pool}
}

// q returns the sqlc queries on the ambient unit of work of ctx, or on the
// pool.
func (s *Store) q(ctx context.Context) *db.Queries { return db.New(pg.Conn(ctx, s.pool)) }

// timeOf maps NULL to the zero time and everything else to UTC.
func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// CreatePerson implements app.Store: the principal and the people row in
// one statement (query PersonInsertWithPrincipal).
func (s *Store) CreatePerson(ctx context.Context, p app.Person, passwordHash string) error {
	err := s.q(ctx).PersonInsertWithPrincipal(ctx, db.PersonInsertWithPrincipalParams{
		ID: p.ID, DisplayName: p.DisplayName, Email: p.Email, PasswordHash: passwordHash, Role: string(p.Role), CreatedAt: p.CreatedAt,
	})
	if err != nil {
		if pg.IsUniqueViolation(err, "people_email_key") {
			return errs.Conflict(app.ReasonEmailTaken)
		}
		return errs.Wrap(err, "identity: storing a person failed")
	}
	return nil
}

// CountOwners implements app.Store.
func (s *Store) CountOwners(ctx context.Context) (int, error) {
	n, err := s.q(ctx).PersonCountOwners(ctx)
	if err != nil {
		return 0, errs.Wrap(err, "identity: counting the owners failed")
	}
	return int(n), nil
}

// PersonByID implements app.Store.
func (s *Store) PersonByID(ctx context.Context, id ids.ID) (app.Person, bool, error) {
	r, err := s.q(ctx).PersonGetByID(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Person{}, false, nil
	}
	if err != nil {
		return app.Person{}, false, errs.Wrap(err, "identity: reading a person failed")
	}
	return app.Person{ID: r.PrincipalID, Email: r.Email, DisplayName: r.DisplayName, Role: actor.Role(r.Role), CreatedAt: r.CreatedAt.UTC()}, true, nil
}

// CredentialsByEmail implements app.Store.
func (s *Store) CredentialsByEmail(ctx context.Context, email string) (app.Credentials, bool, error) {
	r, err := s.q(ctx).PersonCredentialsByEmail(ctx, email)
	return credentials(db.PersonCredentialsByIDRow(r), err)
}

// CredentialsByID implements app.Store.
func (s *Store) CredentialsByID(ctx context.Context, id ids.ID) (app.Credentials, bool, error) {
	return credentials(s.q(ctx).PersonCredentialsByID(ctx, id))
}

// credentials converts the result of a credentials query.
func credentials(r db.PersonCredentialsByIDRow, err error) (app.Credentials, bool, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Credentials{}, false, nil
	}
	if err != nil {
		return app.Credentials{}, false, errs.Wrap(err, "identity: reading credentials failed")
	}
	return app.Credentials{PersonID: r.PrincipalID, PasswordHash: r.PasswordHash}, true, nil
}

// SetPasswordHash implements app.Store.
func (s *Store) SetPasswordHash(ctx context.Context, id ids.ID, hash string, now time.Time) error {
	err := s.q(ctx).PersonUpdatePasswordHash(ctx, db.PersonUpdatePasswordHashParams{PrincipalID: id, PasswordHash: hash, UpdatedAt: now})
	if err != nil {
		return errs.Wrap(err, "identity: storing a password hash failed")
	}
	return nil
}

// CreateSession implements app.Store.
func (s *Store) CreateSession(ctx context.Context, sess app.Session, hash domain.TokenHash) error {
	err := s.q(ctx).SessionInsert(ctx, db.SessionInsertParams{
		ID: sess.ID, PersonID: sess.PersonID, TokenHash: hash[:], CreatedAt: sess.CreatedAt, ExpiresAt: sess.ExpiresAt,
		SteppedUpAt: pg.NullTime(sess.SteppedUpAt),
	})
	if err != nil {
		return errs.Wrap(err, "identity: storing a session failed")
	}
	return nil
}

// ActiveSession implements app.Store.
func (s *Store) ActiveSession(ctx context.Context, id, personID ids.ID, now time.Time) (app.Session, bool, error) {
	r, err := s.q(ctx).SessionGetActive(ctx, db.SessionGetActiveParams{ID: id, PersonID: personID, Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Session{}, false, nil
	}
	if err != nil {
		return app.Session{}, false, errs.Wrap(err, "identity: reading a session failed")
	}
	return app.Session{ID: r.ID, PersonID: r.PersonID, CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(),
		SteppedUpAt: timeOf(r.SteppedUpAt)}, true, nil
}

// SetSteppedUp implements app.Store.
func (s *Store) SetSteppedUp(ctx context.Context, id ids.ID, at time.Time) (bool, error) {
	return affected(s.q(ctx).SessionUpdateSteppedUp(ctx, db.SessionUpdateSteppedUpParams{ID: id, At: at}))
}

// RevokeSession implements app.Store.
func (s *Store) RevokeSession(ctx context.Context, id, personID ids.ID, at time.Time) (bool, error) {
	return affected(s.q(ctx).SessionRevoke(ctx, db.SessionRevokeParams{ID: id, PersonID: personID, At: at}))
}

// affected converts the result of an update of one session or token row.
func affected(n int64, err error) (bool, error) {
	if err != nil {
		return false, errs.Wrap(err, "identity: updating a session or token failed")
	}
	return n == 1, nil
}

// CreatePersonalToken implements app.Store.
func (s *Store) CreatePersonalToken(ctx context.Context, t app.PersonalToken, hash domain.TokenHash) error {
	err := s.q(ctx).PersonalTokenInsert(ctx, db.PersonalTokenInsertParams{
		ID: t.ID, PersonID: t.PersonID, Name: t.Name, TokenHash: hash[:], CreatedAt: t.CreatedAt, ExpiresAt: pg.NullTime(t.ExpiresAt),
	})
	if err != nil {
		return errs.Wrap(err, "identity: storing a personal token failed")
	}
	return nil
}

// ActivePersonalTokens implements app.Store.
func (s *Store) ActivePersonalTokens(ctx context.Context, personID ids.ID, now time.Time) ([]app.PersonalToken, error) {
	rows, err := s.q(ctx).PersonalTokenListActiveByPerson(ctx, db.PersonalTokenListActiveByPersonParams{PersonID: personID, Now: now})
	if err != nil {
		return nil, errs.Wrap(err, "identity: reading personal tokens failed")
	}
	out := make([]app.PersonalToken, 0, len(rows))
	for _, r := range rows {
		out = append(out, personalToken(db.PersonalTokenGetActiveRow(r)))
	}
	return out, nil
}

// ActivePersonalToken implements app.Store.
func (s *Store) ActivePersonalToken(ctx context.Context, id ids.ID, now time.Time) (app.PersonalToken, bool, error) {
	r, err := s.q(ctx).PersonalTokenGetActive(ctx, db.PersonalTokenGetActiveParams{ID: id, Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		return app.PersonalToken{}, false, nil
	}
	if err != nil {
		return app.PersonalToken{}, false, errs.Wrap(err, "identity: reading a personal token failed")
	}
	return personalToken(r), true, nil
}

// personalToken maps a row of either personal token read.
func personalToken(r db.PersonalTokenGetActiveRow) app.PersonalToken {
	return app.PersonalToken{ID: r.ID, PersonID: r.PersonID, Name: r.Name, CreatedAt: r.CreatedAt.UTC(), ExpiresAt: timeOf(r.ExpiresAt)}
}

// RevokePersonalToken implements app.Store.
func (s *Store) RevokePersonalToken(ctx context.Context, id ids.ID, at time.Time) (bool, error) {
	return affected(s.q(ctx).PersonalTokenRevoke(ctx, db.PersonalTokenRevokeParams{ID: id, At: at}))
}

// CreateAppToken implements app.Store.
func (s *Store) CreateAppToken(ctx context.Context, id, principalID ids.ID, hash domain.TokenHash, now time.Time) error {
	err := s.q(ctx).AppTokenInsert(ctx, db.AppTokenInsertParams{ID: id, PrincipalID: principalID, TokenHash: hash[:], CreatedAt: now})
	if err != nil {
		return errs.Wrap(err, "identity: storing an app token failed")
	}
	return nil
}

// RevokeAppTokens implements app.Store.
func (s *Store) RevokeAppTokens(ctx context.Context, principalID ids.ID, at time.Time) error {
	if err := s.q(ctx).AppTokenRevokeByPrincipal(ctx, db.AppTokenRevokeByPrincipalParams{PrincipalID: principalID, RevokedAt: at}); err != nil {
		return errs.Wrap(err, "identity: revoking app tokens failed")
	}
	return nil
}

// LookupToken implements app.Store with one query per kind, each one
// index probe by token_hash plus the principal's row; app tokens do not
// expire, so their query takes no now. An unknown kind finds nothing.
func (s *Store) LookupToken(ctx context.Context, kind domain.TokenKind, hash domain.TokenHash, now time.Time) (app.TokenOwner, bool, error) {
	q := s.q(ctx)
	switch kind {
	case domain.TokenSession:
		r, err := q.SessionOwnerByTokenHash(ctx, db.SessionOwnerByTokenHashParams{TokenHash: hash[:], Now: now})
		return tokenOwner(app.TokenOwner{ID: r.ID, PrincipalID: r.PersonID, Role: actor.Role(r.Role), SteppedUpAt: timeOf(r.SteppedUpAt), ExpiresAt: r.ExpiresAt.UTC()}, err)
	case domain.TokenPersonal:
		r, err := q.PersonalTokenOwnerByTokenHash(ctx, db.PersonalTokenOwnerByTokenHashParams{TokenHash: hash[:], Now: now})
		return tokenOwner(app.TokenOwner{ID: r.ID, PrincipalID: r.PersonID, Role: actor.Role(r.Role), ExpiresAt: timeOf(r.ExpiresAt)}, err)
	case domain.TokenApp:
		r, err := q.AppTokenOwnerByTokenHash(ctx, hash[:])
		return tokenOwner(app.TokenOwner{ID: r.ID, PrincipalID: r.PrincipalID}, err)
	}
	return app.TokenOwner{}, false, nil
}

// tokenOwner converts the result of a token lookup.
func tokenOwner(o app.TokenOwner, err error) (app.TokenOwner, bool, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return app.TokenOwner{}, false, nil
	}
	if err != nil {
		return app.TokenOwner{}, false, errs.Wrap(err, "identity: looking up a token failed")
	}
	return o, true, nil
}

// CreatePrincipal implements app.Store.
func (s *Store) CreatePrincipal(ctx context.Context, id ids.ID, kind actor.Kind, displayName string, now time.Time) error {
	err := s.q(ctx).PrincipalInsert(ctx, db.PrincipalInsertParams{ID: id, Kind: string(kind), DisplayName: displayName, CreatedAt: now})
	if err != nil {
		return errs.Wrap(err, "identity: storing a principal failed")
	}
	return nil
}

// CreateAgent implements app.Store.
func (s *Store) CreateAgent(ctx context.Context, id ids.ID, now time.Time) error {
	if err := s.q(ctx).AgentInsert(ctx, db.AgentInsertParams{PrincipalID: id, CreatedAt: now}); err != nil {
		return errs.Wrap(err, "identity: storing an agent failed")
	}
	return nil
}

// PrincipalKind implements app.Store.
func (s *Store) PrincipalKind(ctx context.Context, id ids.ID) (actor.Kind, bool, error) {
	kind, err := s.q(ctx).PrincipalKindByID(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, errs.Wrap(err, "identity: reading a principal failed")
	}
	return actor.Kind(kind), true, nil
}
