// Package postgres stores the instance module's data in PostgreSQL
// (migrations 00011 and 00012): the instance row and the server signing
// keys. It implements app.Store; every query joins the unit of work of the
// context (pg.Conn).
package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/app"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/pg"
)

// LockClassKeys is the advisory lock class (first key of
// pg_advisory_xact_lock(int, int)) that serializes Ensure and the rotation
// of the signing keys; the second key is 0. The two-key form never meets
// River's single-key locks, and the class differs from those of the sync
// module (0x62740001, 0x62740002).
const LockClassKeys int32 = 0x62740010

// ErrNoUnitOfWork is returned by LockKeys outside a unit of work: a lock
// that ends with the statement would protect nothing.
var ErrNoUnitOfWork = errs.New(errs.CodeInternal, "instance: no unit of work in the context")

// Store implements app.Store.
type Store struct {
	pool *pgxpool.Pool
}

var _ app.Store = (*Store)(nil)

// New returns a Store over pool (connected as bothy_app). It panics on a
// nil pool (a wiring bug).
func New(pool *pgxpool.Pool) *Store {
	if pool == nil {
		panic("instance: postgres.New needs a pool")
	}
	return &Store{pool: pool}
}

// LockKeys implements app.Store.
func (s *Store) LockKeys(ctx context.Context) error {
	tx, ok := pg.TxFrom(ctx)
	if !ok {
		return ErrNoUnitOfWork
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, LockClassKeys); err != nil {
		return errs.Wrap(err, "instance: taking the key lock failed")
	}
	return nil
}

// LoadInstance implements app.Store.
func (s *Store) LoadInstance(ctx context.Context) (instance.Record, bool, error) {
	var r instance.Record
	err := pg.Conn(ctx, s.pool).QueryRow(ctx, `SELECT id, name, sync_epoch FROM instance`).Scan(&r.ID, &r.Name, &r.SyncEpoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return instance.Record{}, false, nil
	}
	if err != nil {
		return instance.Record{}, false, errs.Wrap(err, "instance: reading the instance row failed")
	}
	return r, true, nil
}

// CreateInstance implements app.Store.
func (s *Store) CreateInstance(ctx context.Context, rec instance.Record, now time.Time) (bool, error) {
	tag, err := pg.Conn(ctx, s.pool).Exec(ctx, `
		INSERT INTO instance (id, name, sync_epoch, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4)
		ON CONFLICT ((true)) DO NOTHING`, rec.ID, rec.Name, rec.SyncEpoch, now)
	if err != nil {
		return false, errs.Wrap(err, "instance: creating the instance row failed")
	}
	return tag.RowsAffected() == 1, nil
}

// ListKeys implements app.Store.
func (s *Store) ListKeys(ctx context.Context) ([]app.StoredKey, error) {
	rows, err := pg.Conn(ctx, s.pool).Query(ctx, `
		SELECT kid, purpose, state, public_key, private_key_enc, created_at, activated_at, not_after
		FROM server_signing_keys
		WHERE state <> 'retired'
		ORDER BY purpose, kid`)
	if err != nil {
		return nil, errs.Wrap(err, "instance: reading the signing keys failed")
	}
	defer rows.Close()
	var out []app.StoredKey
	for rows.Next() {
		var k app.StoredKey
		var purpose, state string
		var activated, notAfter *time.Time
		if err := rows.Scan(&k.KID, &purpose, &state, &k.PublicKey, &k.Sealed, &k.CreatedAt, &activated, &notAfter); err != nil {
			return nil, errs.Wrap(err, "instance: reading the signing keys failed")
		}
		k.Purpose, k.State = instance.Purpose(purpose), instance.KeyState(state)
		k.CreatedAt = k.CreatedAt.UTC()
		if activated != nil {
			k.ActivatedAt = activated.UTC()
		}
		if notAfter != nil {
			k.NotAfter = notAfter.UTC()
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, errs.Wrap(err, "instance: reading the signing keys failed")
	}
	return out, nil
}

// InsertKey implements app.Store.
func (s *Store) InsertKey(ctx context.Context, k app.StoredKey) error {
	var activated *time.Time
	if !k.ActivatedAt.IsZero() {
		activated = &k.ActivatedAt
	}
	_, err := pg.Conn(ctx, s.pool).Exec(ctx, `
		INSERT INTO server_signing_keys (kid, purpose, alg, state, public_key, private_key_enc, created_at, activated_at)
		VALUES ($1, $2, 'EdDSA', $3, $4, $5, $6, $7)`,
		k.KID, string(k.Purpose), string(k.State), []byte(k.PublicKey), k.Sealed, k.CreatedAt, activated)
	if err != nil {
		return errs.Wrap(err, "instance: storing a signing key failed")
	}
	return nil
}

// PromoteKey implements app.Store.
func (s *Store) PromoteKey(ctx context.Context, kid string, at time.Time) error {
	return s.transition(ctx, `
		UPDATE server_signing_keys SET state = 'active', activated_at = $2
		WHERE kid = $1 AND state = 'next'`, kid, at)
}

// StartRetiring implements app.Store.
func (s *Store) StartRetiring(ctx context.Context, kid string, notAfter time.Time) error {
	return s.transition(ctx, `
		UPDATE server_signing_keys SET state = 'retiring', not_after = $2
		WHERE kid = $1 AND state = 'active'`, kid, notAfter)
}

// RetireKey implements app.Store. The private key is overwritten with the
// empty value, so a retired key can never sign again, whoever holds the
// master key.
func (s *Store) RetireKey(ctx context.Context, kid string, at time.Time) error {
	return s.transition(ctx, `
		UPDATE server_signing_keys SET state = 'retired', retired_at = $2, private_key_enc = ''::bytea
		WHERE kid = $1 AND state = 'retiring'`, kid, at)
}

// transition runs a state change that must hit exactly one row; anything
// else means the key left the expected state, which the key lock rules
// out, so it is an internal error.
func (s *Store) transition(ctx context.Context, sql, kid string, at time.Time) error {
	tag, err := pg.Conn(ctx, s.pool).Exec(ctx, sql, kid, at)
	if err != nil {
		return errs.Wrap(err, "instance: changing the state of a signing key failed")
	}
	if tag.RowsAffected() != 1 {
		return errs.Internalf("instance: a signing key was not in the expected state")
	}
	return nil
}
