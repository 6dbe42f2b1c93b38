// Package app holds the use cases of the instance module: Ensure (the
// instance row and one active key per purpose, at every start), Load
// (instance.State), the rotation of the signing keys (RotateSigningKey for
// `bothy keys rotate`, RotateDue for the maintenance job) and Keys, the
// cached implementation of instance.Keys.
package app

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"unicode/utf8"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/domain"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/txn"
)

// MaxNameLength is the longest instance name in characters, the bound of
// the column instance.name (migration 00011).
const MaxNameLength = 200

// Options configure the Service.
type Options struct {
	// Name is instance.name: the name the instance row gets when Ensure
	// creates it. 1 to MaxNameLength characters.
	Name string
	// Rotation holds agent.jwks_max_age (PublishAhead) and
	// instance.signing_key_max_age (MaxAge); MaxAge must exceed
	// PublishAhead.
	Rotation domain.Policy
}

// Deps are the collaborators of the Service; all are required except
// Random.
type Deps struct {
	// UnitOfWork runs each use case in one transaction.
	UnitOfWork txn.UnitOfWork
	// Store persists the instance row and the keys.
	Store Store
	// Keys is the cache that a rotation in this process invalidates.
	Keys *Keys
	// Master seals new private keys.
	Master MasterKey
	// Audit records every change of the keys.
	Audit auditing.Recorder
	// Clock stamps rows; RotateDue takes its own now.
	Clock clock.Clock
	// Random makes keys, nonces and IDs; nil means crypto/rand.
	Random io.Reader
}

// Service runs the use cases of the instance module. It implements
// instance.State.
type Service struct {
	uow    txn.UnitOfWork
	store  Store
	keys   *Keys
	master MasterKey
	audit  auditing.Recorder
	clock  clock.Clock
	random io.Reader
	opts   Options
}

var _ instance.State = (*Service)(nil)

// New returns the Service. It returns an error for invalid Options and
// panics on a missing dependency (a wiring bug).
func New(d Deps, o Options) (*Service, error) {
	if d.UnitOfWork == nil || d.Store == nil || d.Keys == nil || d.Master == nil || d.Audit == nil || d.Clock == nil {
		panic("instance: New needs a unit of work, store, keys, master key, audit recorder and clock")
	}
	if n := utf8.RuneCountInString(o.Name); n == 0 || n > MaxNameLength {
		return nil, errors.New("instance: Options.Name (instance.name) must have 1 to 200 characters")
	}
	if o.Rotation.PublishAhead <= 0 || o.Rotation.MaxAge <= o.Rotation.PublishAhead {
		return nil, errors.New("instance: instance.signing_key_max_age must exceed agent.jwks_max_age, which must be positive")
	}
	if d.Random == nil {
		d.Random = rand.Reader
	}
	return &Service{uow: d.UnitOfWork, store: d.Store, keys: d.Keys, master: d.Master, audit: d.Audit,
		clock: d.Clock, random: d.Random, opts: o}, nil
}

// ErrNoInstance is returned by Load before Ensure created the instance row.
var ErrNoInstance = errs.New(errs.CodeInternal, "instance: the instance row does not exist; Ensure has not run")

// Load implements instance.State. It reads the row on every call, in the
// unit of work of ctx when there is one, so a caller sees the sync epoch
// of its own transaction. Errors: ErrNoInstance, or an internal error of
// the store.
func (s *Service) Load(ctx context.Context) (instance.Record, error) {
	rec, ok, err := s.store.LoadInstance(ctx)
	if err != nil {
		return instance.Record{}, err
	}
	if !ok {
		return instance.Record{}, ErrNoInstance
	}
	return rec, nil
}
