// Package idempotencypg is the PostgreSQL implementation of
// idempotency.Store over the table idempotency_keys.
//
// # How a request runs
//
//  1. Reserve: INSERT the key row (status NULL, the request hash) in a
//     statement of its own that commits at once, ON CONFLICT DO NOTHING.
//     Committing the reservation first is what lets a concurrent duplicate
//     see it without waiting on an uncommitted insert.
//  2. Claim, in a new unit of work: SELECT the row FOR UPDATE NOWAIT. A row
//     locked by another transaction is a request in flight: 409 conflict
//     in_progress, at once. A completed row is replayed (same hash) or
//     refused (other hash: idempotency_key_reuse). An expired row is reset
//     to this request.
//  3. Run the handler in that same unit of work (its own units of work join
//     it) and store the response in it. Success commits the handler's writes
//     and the stored response together; a response of 400 or more rolls
//     everything back and stores nothing.
//
// # Crash semantics
//
// The row lock, not a timer, says "in flight": PostgreSQL releases it when
// the transaction ends or its connection dies. If the process crashes after
// step 1 or during step 3, nothing of the handler committed and the row stays
// reserved and unlocked; the next request with the same key and hash claims
// it and runs, one with another hash gets idempotency_key_reuse until the key
// expires. So a request with a key takes effect at most once, and exactly
// once if the client retries until it gets an answer.
//
// Because the handler's units of work join the claim transaction, a
// serialization failure or deadlock inside the handler aborts the whole
// request; Store.Do then runs it again (the unit of work retries, as it does
// for requests without a key).
package idempotencypg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/idempotency"
	"bothy/server/internal/kernel/txn"
	"bothy/server/internal/platform/pg"
)

// Options configure a Store.
type Options struct {
	// KeyTTL is idempotency.key_ttl: how long a key stays bound to its
	// request and its response is replayed. After it the row may be purged
	// and the key starts afresh. Must be positive.
	KeyTTL time.Duration
	// PurgeBatchSize is retention.batch_size: the most rows one delete
	// statement of Purge removes, so a purge never holds many row locks at
	// once. At least 1.
	PurgeBatchSize int
}

// Store implements idempotency.Store.
type Store struct {
	pool  *pgxpool.Pool
	uow   txn.UnitOfWork
	clock clock.Clock
	ttl   time.Duration
	batch int
}

var _ idempotency.Store = (*Store)(nil)

// New returns a Store over pool (bothy_app). uow must be the pg unit of work
// over the same pool: the claim and the handler run in one of its units of
// work. It returns an error for a non-positive KeyTTL and panics on a nil
// dependency (a wiring bug).
func New(pool *pgxpool.Pool, uow txn.UnitOfWork, clk clock.Clock, o Options) (*Store, error) {
	if pool == nil || uow == nil || clk == nil {
		panic("idempotencypg: New needs a pool, a unit of work and a clock")
	}
	if o.KeyTTL <= 0 {
		return nil, errors.New("idempotencypg: idempotency.key_ttl must be positive")
	}
	if o.PurgeBatchSize < 1 {
		return nil, errors.New("idempotencypg: retention.batch_size must be at least 1")
	}
	return &Store{pool: pool, uow: uow, clock: clk, ttl: o.KeyTTL, batch: o.PurgeBatchSize}, nil
}

var (
	// errVanished: the reserved row was purged between reserve and claim.
	errVanished = errors.New("idempotencypg: reservation vanished")
	// errPanicked: fn panicked; Do rolls back, then panics again.
	errPanicked = errors.New("idempotencypg: handler panicked")
)

// rolledBack carries a failure response out of the unit of work so that it
// rolls back; Unwrap exposes the cause, so the unit of work retries
// serialization failures and deadlocks.
type rolledBack struct{ cause error }

func (r *rolledBack) Error() string { return "idempotencypg: failure response rolled back" }
func (r *rolledBack) Unwrap() error { return r.cause }

// Do implements idempotency.Store.
func (s *Store) Do(ctx context.Context, req idempotency.Request, fn func(context.Context) (idempotency.Response, error)) (idempotency.Result, error) {
	if req.Principal.IsZero() || req.Operation == "" || !idempotency.ValidKey(req.Key) {
		return idempotency.Result{}, errs.Internalf("idempotencypg: request needs a principal, an operation and a valid key")
	}
	if _, inTx := pg.TxFrom(ctx); inTx {
		return idempotency.Result{}, errs.Internalf("idempotencypg: Do must not run inside a transaction")
	}
	// Two rounds cover a purge that removes an expired row between the
	// reservation and the claim; a third vanishing is reported as in flight.
	for range 2 {
		if err := s.reserve(ctx, req); err != nil {
			return idempotency.Result{}, err
		}
		res, err := s.claimAndRun(ctx, req, fn)
		if !errors.Is(err, errVanished) {
			return res, err
		}
	}
	return idempotency.Result{}, errs.Conflict(idempotency.ReasonInProgress)
}

func (s *Store) reserve(ctx context.Context, req idempotency.Request) error {
	now := s.clock.Now()
	_, err := s.pool.Exec(ctx, `
		INSERT INTO idempotency_keys (principal_id, operation, key, request_hash, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (principal_id, operation, key) DO NOTHING`,
		req.Principal, req.Operation, req.Key, req.Hash[:], now, now.Add(s.ttl))
	if err != nil {
		return errs.Wrap(fmt.Errorf("idempotencypg: reserve: %w", err), "idempotency key not reserved")
	}
	return nil
}

type row struct {
	hash          []byte
	status        *int32
	headers       []byte
	body          []byte
	oneTimeSecret bool
	expiresAt     time.Time
}

func (s *Store) claimAndRun(ctx context.Context, req idempotency.Request, fn func(context.Context) (idempotency.Response, error)) (idempotency.Result, error) {
	var (
		res      idempotency.Result
		panicked any
	)
	err := s.uow.Do(ctx, func(ctx context.Context) (err error) {
		res = idempotency.Result{}
		db := pg.Conn(ctx, s.pool)
		var r row
		err = db.QueryRow(ctx, `
			SELECT request_hash, status, headers, body, one_time_secret, expires_at
			FROM idempotency_keys
			WHERE principal_id = $1 AND operation = $2 AND key = $3
			FOR UPDATE NOWAIT`, req.Principal, req.Operation, req.Key).
			Scan(&r.hash, &r.status, &r.headers, &r.body, &r.oneTimeSecret, &r.expiresAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return errVanished
		case lockNotAvailable(err):
			return errs.Conflict(idempotency.ReasonInProgress)
		case err != nil:
			return fmt.Errorf("idempotencypg: claim: %w", err)
		}

		now := s.clock.Now()
		if !r.expiresAt.After(now) {
			if _, err := db.Exec(ctx, `
				UPDATE idempotency_keys
				SET request_hash = $4, status = NULL, headers = NULL, body = NULL,
				    one_time_secret = false, created_at = $5, expires_at = $6
				WHERE principal_id = $1 AND operation = $2 AND key = $3`,
				req.Principal, req.Operation, req.Key, req.Hash[:], now, now.Add(s.ttl)); err != nil {
				return fmt.Errorf("idempotencypg: reset expired key: %w", err)
			}
			r = row{hash: req.Hash[:]}
		}
		if !bytes.Equal(r.hash, req.Hash[:]) {
			return idempotency.ErrKeyReuse()
		}
		if r.status != nil {
			res, err = replay(r)
			return err
		}

		// This request owns the key: run the handler in this unit of work.
		defer func() {
			if p := recover(); p != nil {
				panicked, err = p, errPanicked
			}
		}()
		hctx, marked := idempotency.Watch(ctx)
		resp, cause := fn(hctx)
		res = idempotency.Result{Response: resp}
		if resp.Status >= 400 {
			return &rolledBack{cause: cause}
		}
		return s.complete(ctx, db, req, resp, marked())
	})
	if panicked != nil {
		panic(panicked)
	}
	var rb *rolledBack
	switch {
	case err == nil, errors.As(err, &rb):
		return res, nil
	case errors.Is(err, errVanished):
		return idempotency.Result{}, err
	}
	if _, ok := errs.As(err); ok {
		return idempotency.Result{}, err
	}
	return idempotency.Result{}, errs.Wrap(err, "idempotent request failed")
}

func (s *Store) complete(ctx context.Context, db pg.DBTX, req idempotency.Request, resp idempotency.Response, oneTimeSecret bool) error {
	var headers, body any
	if !oneTimeSecret {
		h, err := json.Marshal(nonNil(resp.Header))
		if err != nil {
			return fmt.Errorf("idempotencypg: encode headers: %w", err)
		}
		headers, body = h, nonNilBytes(resp.Body)
	}
	_, err := db.Exec(ctx, `
		UPDATE idempotency_keys
		SET status = $4, headers = $5, body = $6, one_time_secret = $7
		WHERE principal_id = $1 AND operation = $2 AND key = $3`,
		req.Principal, req.Operation, req.Key, resp.Status, headers, body, oneTimeSecret)
	if err != nil {
		return fmt.Errorf("idempotencypg: store response: %w", err)
	}
	return nil
}

func replay(r row) (idempotency.Result, error) {
	res := idempotency.Result{Replayed: true, OneTimeSecret: r.oneTimeSecret, Response: idempotency.Response{Status: int(*r.status)}}
	if r.oneTimeSecret {
		return res, nil
	}
	if r.headers != nil {
		if err := json.Unmarshal(r.headers, &res.Response.Header); err != nil {
			return idempotency.Result{}, fmt.Errorf("idempotencypg: decode headers: %w", err)
		}
	}
	res.Response.Body = r.body
	return res, nil
}

// Purge deletes the rows whose expires_at has passed, skipping rows a
// request holds right now, and returns how many it deleted. It deletes in
// batches of Options.PurgeBatchSize rows, each one statement on the pool
// (pg.DeleteInBatches), so no batch's locks outlive it. A maintenance job
// calls it; expired rows are also ignored (and reset) by Do, so a late
// purge changes no answer.
func (s *Store) Purge(ctx context.Context) (int64, error) {
	now := s.clock.Now()
	n, err := pg.DeleteInBatches(ctx, s.batch, func(ctx context.Context, limit int) (int64, error) {
		tag, err := s.pool.Exec(ctx, `
			DELETE FROM idempotency_keys
			WHERE (principal_id, operation, key) IN (
				SELECT principal_id, operation, key FROM idempotency_keys
				WHERE expires_at <= $1
				LIMIT $2
				FOR UPDATE SKIP LOCKED)`, now, limit)
		return tag.RowsAffected(), err
	})
	if err != nil {
		return n, errs.Wrap(fmt.Errorf("idempotencypg: purge: %w", err), "idempotency keys not purged")
	}
	return n, nil
}

// lockNotAvailable reports SQLSTATE 55P03, the answer of NOWAIT on a row
// another transaction holds.
func lockNotAvailable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

func nonNil(h map[string][]string) map[string][]string {
	if h == nil {
		return map[string][]string{}
	}
	return h
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
