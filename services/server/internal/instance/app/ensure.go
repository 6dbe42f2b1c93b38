package app

import (
	"context"
	"time"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/domain"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// Ensure creates what every role needs before it serves: the instance row
// (with Options.Name and a fresh random sync_epoch) and one active signing
// key per purpose, when missing. Every role calls it at start.
//
// It is idempotent, and safe when several processes start at once: one
// unit of work under the store's key lock (Store.LockKeys), so the second
// process waits for the first and then finds everything in place; the
// singleton index of instance and the one-active-key index back this up.
// Errors: an internal *errs.Error (master key missing or not 32 bytes,
// database failure).
func (s *Service) Ensure(ctx context.Context) error {
	master, err := s.master.Key(ctx)
	if err != nil {
		return errs.Wrap(err, "instance: the signing keys master key is not available")
	}
	defer clear(master)
	err = s.uow.Do(ctx, func(ctx context.Context) error {
		if err := s.store.LockKeys(ctx); err != nil {
			return err
		}
		now := s.clock.Now()
		rec, ok, err := s.store.LoadInstance(ctx)
		if err != nil {
			return err
		}
		if !ok {
			if rec, err = s.newRecord(now); err != nil {
				return err
			}
			if _, err := s.store.CreateInstance(ctx, rec, now); err != nil {
				return err
			}
		}
		stored, err := s.store.ListKeys(ctx)
		if err != nil {
			return err
		}
		for _, p := range instance.Purposes() {
			steps := domain.PlanRotation(rulesOf(ofPurpose(stored, p)), now, s.opts.Rotation, domain.TriggerEnsure)
			if _, err := s.apply(ctx, rec.ID, p, steps, now, master); err != nil {
				return err
			}
		}
		return nil
	})
	s.keys.Invalidate()
	return err
}

// newRecord makes the instance row: IDs stamped with now from the
// service's random source.
func (s *Service) newRecord(now time.Time) (instance.Record, error) {
	id, err := ids.NewAt(now, s.random)
	if err != nil {
		return instance.Record{}, errs.Wrap(err, "instance: reading randomness failed")
	}
	epoch, err := ids.NewAt(now, s.random)
	if err != nil {
		return instance.Record{}, errs.Wrap(err, "instance: reading randomness failed")
	}
	return instance.Record{ID: id, Name: s.opts.Name, SyncEpoch: epoch}, nil
}
