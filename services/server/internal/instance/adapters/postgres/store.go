// Package postgres stores the instance module's data in PostgreSQL
// (migrations 00011 and 00012): the instance row and the server signing
// keys. It implements app.Store. Queries are sqlc code (queries/*.sql,
// generated into db/, ADR 0078); every query joins the unit of work of the
// context (pg.Conn).
package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/adapters/postgres/db"
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
// that ends with the statement would protect nothing. It is
// pg.ErrNoUnitOfWork, the error of the one guard pg.RequireTx.
var ErrNoUnitOfWork = pg.ErrNoUnitOfWork

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

// q returns the sqlc queries on the ambient unit of work of ctx, or on the
// pool.
func (s *Store) q(ctx context.Context) *db.Queries { return db.New(pg.Conn(ctx, s.pool)) }

// LockKeys implements app.Store.
func (s *Store) LockKeys(ctx context.Context) error {
	tx, err := pg.RequireTx(ctx)
	if err != nil {
		return err
	}
	if err := db.New(tx).ServerSigningKeyLock(ctx, LockClassKeys); err != nil {
		return errs.Wrap(err, "instance: taking the key lock failed")
	}
	return nil
}

// LoadInstance implements app.Store.
func (s *Store) LoadInstance(ctx context.Context) (instance.Record, bool, error) {
	row, err := s.q(ctx).InstanceGet(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return instance.Record{}, false, nil
	}
	if err != nil {
		return instance.Record{}, false, errs.Wrap(err, "instance: reading the instance row failed")
	}
	return instance.Record{ID: row.ID, Name: row.Name, SyncEpoch: row.SyncEpoch}, true, nil
}

// CreateInstance implements app.Store.
func (s *Store) CreateInstance(ctx context.Context, rec instance.Record, now time.Time) (bool, error) {
	n, err := s.q(ctx).InstanceInsert(ctx, db.InstanceInsertParams{ID: rec.ID, Name: rec.Name, SyncEpoch: rec.SyncEpoch, Now: now})
	if err != nil {
		return false, errs.Wrap(err, "instance: creating the instance row failed")
	}
	return n == 1, nil
}

// ListKeys implements app.Store.
func (s *Store) ListKeys(ctx context.Context) ([]app.StoredKey, error) {
	rows, err := s.q(ctx).ServerSigningKeyListUnretired(ctx)
	if err != nil {
		return nil, errs.Wrap(err, "instance: reading the signing keys failed")
	}
	var out []app.StoredKey
	for _, r := range rows {
		k := app.StoredKey{Purpose: instance.Purpose(r.Purpose), PublicKey: r.PublicKey, Sealed: r.PrivateKeyEnc}
		k.KID, k.State, k.CreatedAt = r.Kid, instance.KeyState(r.State), r.CreatedAt.UTC()
		if r.ActivatedAt != nil {
			k.ActivatedAt = r.ActivatedAt.UTC()
		}
		if r.NotAfter != nil {
			k.NotAfter = r.NotAfter.UTC()
		}
		out = append(out, k)
	}
	return out, nil
}

// InsertKey implements app.Store.
func (s *Store) InsertKey(ctx context.Context, k app.StoredKey) error {
	var activated *time.Time
	if !k.ActivatedAt.IsZero() {
		activated = &k.ActivatedAt
	}
	err := s.q(ctx).ServerSigningKeyInsert(ctx, db.ServerSigningKeyInsertParams{
		Kid: k.KID, Purpose: string(k.Purpose), State: string(k.State), PublicKey: []byte(k.PublicKey),
		PrivateKeyEnc: k.Sealed, CreatedAt: k.CreatedAt, ActivatedAt: activated,
	})
	if err != nil {
		return errs.Wrap(err, "instance: storing a signing key failed")
	}
	return nil
}

// PromoteKey implements app.Store.
func (s *Store) PromoteKey(ctx context.Context, kid string, at time.Time) error {
	return transition(s.q(ctx).ServerSigningKeyPromote(ctx, db.ServerSigningKeyPromoteParams{Kid: kid, ActivatedAt: at}))
}

// StartRetiring implements app.Store.
func (s *Store) StartRetiring(ctx context.Context, kid string, notAfter time.Time) error {
	return transition(s.q(ctx).ServerSigningKeyStartRetiring(ctx, db.ServerSigningKeyStartRetiringParams{Kid: kid, NotAfter: notAfter}))
}

// RetireKey implements app.Store. The private key is overwritten with the
// empty value, so a retired key can never sign again, whoever holds the
// master key.
func (s *Store) RetireKey(ctx context.Context, kid string, at time.Time) error {
	return transition(s.q(ctx).ServerSigningKeyRetire(ctx, db.ServerSigningKeyRetireParams{Kid: kid, RetiredAt: at}))
}

// transition checks the result of a state change, which must hit exactly
// one row; anything else means the key left the expected state, which the
// key lock rules out, so it is an internal error.
func transition(n int64, err error) error {
	if err != nil {
		return errs.Wrap(err, "instance: changing the state of a signing key failed")
	}
	if n != 1 {
		return errs.Internalf("instance: a signing key was not in the expected state")
	}
	return nil
}
