// Package postgres stores the identity module's data in PostgreSQL: the
// tables principals, people and agents (migration 00010), sessions
// (00013), personal_tokens (00014) and app_tokens (00015). It implements
// app.Store; every query joins the unit of work of the context (pg.Conn).
// Tokens are stored and looked up only by their SHA-256.
package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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

func (s *Store) conn(ctx context.Context) pg.DBTX { return pg.Conn(ctx, s.pool) }

// nullTime maps the zero time to NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// timeOf maps NULL to the zero time and everything else to UTC.
func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// CreatePerson implements app.Store.
func (s *Store) CreatePerson(ctx context.Context, p app.Person, passwordHash string) error {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO principals (id, kind, display_name, created_at) VALUES ($1, 'person', $2, $3)`, p.ID, p.DisplayName, p.CreatedAt)
	b.Queue(`INSERT INTO people (principal_id, email, password_hash, role, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
		p.ID, p.Email, passwordHash, string(p.Role), p.CreatedAt)
	if err := s.conn(ctx).SendBatch(ctx, b).Close(); err != nil {
		if pg.IsUniqueViolation(err, "people_email_key") {
			return errs.Conflict(app.ReasonEmailTaken)
		}
		return errs.Wrap(err, "identity: storing a person failed")
	}
	return nil
}

// CountOwners implements app.Store.
func (s *Store) CountOwners(ctx context.Context) (int, error) {
	var n int
	if err := s.conn(ctx).QueryRow(ctx, `SELECT count(*) FROM people WHERE role = 'owner'`).Scan(&n); err != nil {
		return 0, errs.Wrap(err, "identity: counting the owners failed")
	}
	return n, nil
}

const personColumns = `p.principal_id, p.email, pr.display_name, p.role, p.created_at
	FROM people p JOIN principals pr ON pr.id = p.principal_id`

// PersonByID implements app.Store.
func (s *Store) PersonByID(ctx context.Context, id ids.ID) (app.Person, bool, error) {
	var p app.Person
	var role string
	err := s.conn(ctx).QueryRow(ctx, `SELECT `+personColumns+` WHERE p.principal_id = $1`, id).
		Scan(&p.ID, &p.Email, &p.DisplayName, &role, &p.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Person{}, false, nil
	}
	if err != nil {
		return app.Person{}, false, errs.Wrap(err, "identity: reading a person failed")
	}
	p.Role, p.CreatedAt = actor.Role(role), p.CreatedAt.UTC()
	return p, true, nil
}

// CredentialsByEmail implements app.Store.
func (s *Store) CredentialsByEmail(ctx context.Context, email string) (app.Credentials, bool, error) {
	return s.credentials(ctx, `SELECT principal_id, password_hash FROM people WHERE email = $1`, email)
}

// CredentialsByID implements app.Store.
func (s *Store) CredentialsByID(ctx context.Context, id ids.ID) (app.Credentials, bool, error) {
	return s.credentials(ctx, `SELECT principal_id, password_hash FROM people WHERE principal_id = $1`, id)
}

func (s *Store) credentials(ctx context.Context, sql string, arg any) (app.Credentials, bool, error) {
	var c app.Credentials
	err := s.conn(ctx).QueryRow(ctx, sql, arg).Scan(&c.PersonID, &c.PasswordHash)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Credentials{}, false, nil
	}
	if err != nil {
		return app.Credentials{}, false, errs.Wrap(err, "identity: reading credentials failed")
	}
	return c, true, nil
}

// SetPasswordHash implements app.Store.
func (s *Store) SetPasswordHash(ctx context.Context, id ids.ID, hash string, now time.Time) error {
	if _, err := s.conn(ctx).Exec(ctx, `UPDATE people SET password_hash = $2, updated_at = $3 WHERE principal_id = $1`, id, hash, now); err != nil {
		return errs.Wrap(err, "identity: storing a password hash failed")
	}
	return nil
}

// CreateSession implements app.Store.
func (s *Store) CreateSession(ctx context.Context, sess app.Session, hash domain.TokenHash) error {
	_, err := s.conn(ctx).Exec(ctx, `
		INSERT INTO sessions (id, person_id, token_hash, created_at, expires_at, stepped_up_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		sess.ID, sess.PersonID, hash[:], sess.CreatedAt, sess.ExpiresAt, nullTime(sess.SteppedUpAt))
	if err != nil {
		return errs.Wrap(err, "identity: storing a session failed")
	}
	return nil
}

// ActiveSession implements app.Store.
func (s *Store) ActiveSession(ctx context.Context, id, personID ids.ID, now time.Time) (app.Session, bool, error) {
	var sess app.Session
	var steppedUp *time.Time
	err := s.conn(ctx).QueryRow(ctx, `
		SELECT id, person_id, created_at, expires_at, stepped_up_at FROM sessions
		WHERE id = $1 AND person_id = $2 AND revoked_at IS NULL AND expires_at > $3`, id, personID, now).
		Scan(&sess.ID, &sess.PersonID, &sess.CreatedAt, &sess.ExpiresAt, &steppedUp)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Session{}, false, nil
	}
	if err != nil {
		return app.Session{}, false, errs.Wrap(err, "identity: reading a session failed")
	}
	sess.CreatedAt, sess.ExpiresAt, sess.SteppedUpAt = sess.CreatedAt.UTC(), sess.ExpiresAt.UTC(), timeOf(steppedUp)
	return sess, true, nil
}

// SetSteppedUp implements app.Store.
func (s *Store) SetSteppedUp(ctx context.Context, id ids.ID, at time.Time) (bool, error) {
	return s.affected(ctx, `UPDATE sessions SET stepped_up_at = $2 WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2`, id, at)
}

// RevokeSession implements app.Store.
func (s *Store) RevokeSession(ctx context.Context, id, personID ids.ID, at time.Time) (bool, error) {
	return s.affected(ctx, `UPDATE sessions SET revoked_at = $3 WHERE id = $1 AND person_id = $2 AND revoked_at IS NULL AND expires_at > $3`, id, personID, at)
}

func (s *Store) affected(ctx context.Context, sql string, args ...any) (bool, error) {
	tag, err := s.conn(ctx).Exec(ctx, sql, args...)
	if err != nil {
		return false, errs.Wrap(err, "identity: updating a session or token failed")
	}
	return tag.RowsAffected() == 1, nil
}

// CreatePersonalToken implements app.Store.
func (s *Store) CreatePersonalToken(ctx context.Context, t app.PersonalToken, hash domain.TokenHash) error {
	_, err := s.conn(ctx).Exec(ctx, `
		INSERT INTO personal_tokens (id, person_id, name, token_hash, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, t.ID, t.PersonID, t.Name, hash[:], t.CreatedAt, nullTime(t.ExpiresAt))
	if err != nil {
		return errs.Wrap(err, "identity: storing a personal token failed")
	}
	return nil
}

// unrevokedUnexpired is the SQL condition on a personal_tokens row that is
// neither revoked nor expired at $2 (the row is usable for authentication).
const unrevokedUnexpired = `revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`

// ActivePersonalTokens implements app.Store.
func (s *Store) ActivePersonalTokens(ctx context.Context, personID ids.ID, now time.Time) ([]app.PersonalToken, error) {
	rows, err := s.conn(ctx).Query(ctx, `
		SELECT id, person_id, name, created_at, expires_at FROM personal_tokens
		WHERE person_id = $1 AND `+unrevokedUnexpired+` ORDER BY created_at DESC, id DESC`, personID, now)
	if err != nil {
		return nil, errs.Wrap(err, "identity: reading personal tokens failed")
	}
	out, err := pgx.CollectRows(rows, scanPersonalToken)
	if err != nil {
		return nil, errs.Wrap(err, "identity: reading personal tokens failed")
	}
	return out, nil
}

// ActivePersonalToken implements app.Store.
func (s *Store) ActivePersonalToken(ctx context.Context, id ids.ID, now time.Time) (app.PersonalToken, bool, error) {
	rows, err := s.conn(ctx).Query(ctx, `
		SELECT id, person_id, name, created_at, expires_at FROM personal_tokens
		WHERE id = $1 AND `+unrevokedUnexpired, id, now)
	if err != nil {
		return app.PersonalToken{}, false, errs.Wrap(err, "identity: reading a personal token failed")
	}
	t, err := pgx.CollectExactlyOneRow(rows, scanPersonalToken)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.PersonalToken{}, false, nil
	}
	if err != nil {
		return app.PersonalToken{}, false, errs.Wrap(err, "identity: reading a personal token failed")
	}
	return t, true, nil
}

func scanPersonalToken(row pgx.CollectableRow) (app.PersonalToken, error) {
	var t app.PersonalToken
	var expires *time.Time
	if err := row.Scan(&t.ID, &t.PersonID, &t.Name, &t.CreatedAt, &expires); err != nil {
		return app.PersonalToken{}, err
	}
	t.CreatedAt, t.ExpiresAt = t.CreatedAt.UTC(), timeOf(expires)
	return t, nil
}

// RevokePersonalToken implements app.Store.
func (s *Store) RevokePersonalToken(ctx context.Context, id ids.ID, at time.Time) (bool, error) {
	return s.affected(ctx, `UPDATE personal_tokens SET revoked_at = $2 WHERE id = $1 AND `+unrevokedUnexpired, id, at)
}

// CreateAppToken implements app.Store.
func (s *Store) CreateAppToken(ctx context.Context, id, principalID ids.ID, hash domain.TokenHash, now time.Time) error {
	_, err := s.conn(ctx).Exec(ctx, `INSERT INTO app_tokens (id, principal_id, token_hash, created_at) VALUES ($1, $2, $3, $4)`,
		id, principalID, hash[:], now)
	if err != nil {
		return errs.Wrap(err, "identity: storing an app token failed")
	}
	return nil
}

// RevokeAppTokens implements app.Store.
func (s *Store) RevokeAppTokens(ctx context.Context, principalID ids.ID, at time.Time) error {
	if _, err := s.conn(ctx).Exec(ctx, `UPDATE app_tokens SET revoked_at = $2 WHERE principal_id = $1 AND revoked_at IS NULL`, principalID, at); err != nil {
		return errs.Wrap(err, "identity: revoking app tokens failed")
	}
	return nil
}

// The lookups of LookupToken, one per kind. Each is one index probe by
// token_hash plus the principal's row; $2 is now, except for app tokens,
// which do not expire.
var lookups = map[domain.TokenKind]string{
	domain.TokenSession: `
		SELECT s.id, s.person_id, p.role, s.stepped_up_at FROM sessions s JOIN people p ON p.principal_id = s.person_id
		WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`,
	domain.TokenPersonal: `
		SELECT t.id, t.person_id, p.role, NULL::timestamptz FROM personal_tokens t JOIN people p ON p.principal_id = t.person_id
		WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)`,
	domain.TokenApp: `
		SELECT t.id, t.principal_id, '', NULL::timestamptz FROM app_tokens t JOIN principals pr ON pr.id = t.principal_id
		WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND pr.kind = 'app'`,
}

// LookupToken implements app.Store.
func (s *Store) LookupToken(ctx context.Context, kind domain.TokenKind, hash domain.TokenHash, now time.Time) (app.TokenOwner, bool, error) {
	sql, ok := lookups[kind]
	if !ok {
		return app.TokenOwner{}, false, nil
	}
	var o app.TokenOwner
	var role string
	var steppedUp *time.Time
	args := []any{hash[:]}
	if kind != domain.TokenApp {
		args = append(args, now)
	}
	err := s.conn(ctx).QueryRow(ctx, sql, args...).Scan(&o.ID, &o.PrincipalID, &role, &steppedUp)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.TokenOwner{}, false, nil
	}
	if err != nil {
		return app.TokenOwner{}, false, errs.Wrap(err, "identity: looking up a token failed")
	}
	o.Role, o.SteppedUpAt = actor.Role(role), timeOf(steppedUp)
	return o, true, nil
}

// CreatePrincipal implements app.Store.
func (s *Store) CreatePrincipal(ctx context.Context, id ids.ID, kind actor.Kind, displayName string, now time.Time) error {
	if _, err := s.conn(ctx).Exec(ctx, `INSERT INTO principals (id, kind, display_name, created_at) VALUES ($1, $2, $3, $4)`,
		id, string(kind), displayName, now); err != nil {
		return errs.Wrap(err, "identity: storing a principal failed")
	}
	return nil
}

// CreateAgent implements app.Store.
func (s *Store) CreateAgent(ctx context.Context, id ids.ID, now time.Time) error {
	if _, err := s.conn(ctx).Exec(ctx, `INSERT INTO agents (principal_id, created_at) VALUES ($1, $2)`, id, now); err != nil {
		return errs.Wrap(err, "identity: storing an agent failed")
	}
	return nil
}

// PrincipalKind implements app.Store.
func (s *Store) PrincipalKind(ctx context.Context, id ids.ID) (actor.Kind, bool, error) {
	var kind string
	err := s.conn(ctx).QueryRow(ctx, `SELECT kind FROM principals WHERE id = $1`, id).Scan(&kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, errs.Wrap(err, "identity: reading a principal failed")
	}
	return actor.Kind(kind), true, nil
}
