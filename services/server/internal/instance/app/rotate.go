package app

import (
	"context"
	"crypto/ed25519"
	"time"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// ActionRotate is the audit action of every change of the signing keys: a
// system action of the catalogue (the server itself acts, also for
// `bothy keys rotate`, whose operator is no principal).
const ActionRotate = authorize.InstanceSigningKeyRotate

// AppliedStep is a step of a rotation as it was carried out.
type AppliedStep struct {
	// Kind is the change.
	Kind domain.StepKind
	// KID is the key the step changed or created.
	KID string
	// Previous is, for a promotion, the key that became retiring.
	Previous string
}

// Rotation reports what a rotation did for one purpose.
type Rotation struct {
	// Purpose is the purpose of the keys.
	Purpose instance.Purpose
	// Steps are the changes carried out, in order; empty when none was due.
	Steps []AppliedStep
	// Keys are the purpose's keys after the steps, in the published order
	// (without private parts).
	Keys []instance.PublicKey
	// NextDue is when the next step of the scheduled rotation is due
	// (domain.NextDue).
	NextDue time.Time
}

// RotateSigningKey is `bothy keys rotate --purpose p`: it runs the due
// steps of p (retirements, the promotion of a next key published for
// agent.jwks_max_age) and creates a next key at once when p has none. The
// new key is published at once and is promoted by a later call or by
// RotateDue once agent.jwks_max_age has passed, so that every cached key
// set already knows it when it starts signing. Errors: validation_failed
// for an unknown purpose; internal errors of the master key and the store.
func (s *Service) RotateSigningKey(ctx context.Context, p instance.Purpose) (Rotation, error) {
	if !p.Valid() {
		return Rotation{}, errs.Validation(errs.Field("/purpose", "unknown_purpose"))
	}
	out, err := s.rotate(ctx, s.clock.Now(), domain.TriggerManual, p)
	if err != nil {
		return Rotation{}, err
	}
	return out[0], nil
}

// RotateDue runs the due steps of every purpose at now: retire retiring
// keys agent.jwks_max_age after their not_after, promote a next key
// published for agent.jwks_max_age, and create the next key when the
// active one reaches instance.signing_key_max_age - agent.jwks_max_age (so
// it is promoted at instance.signing_key_max_age). The maintenance job
// calls it periodically; calling it more often changes nothing. Errors:
// internal errors of the master key and the store.
func (s *Service) RotateDue(ctx context.Context, now time.Time) ([]Rotation, error) {
	return s.rotate(ctx, now, domain.TriggerDue, instance.Purposes()...)
}

func (s *Service) rotate(ctx context.Context, now time.Time, t domain.Trigger, purposes ...instance.Purpose) ([]Rotation, error) {
	master, err := s.master.Key(ctx)
	if err != nil {
		return nil, errs.Wrap(err, "instance: the signing keys master key is not available")
	}
	defer clear(master)
	var out []Rotation
	err = s.uow.Do(ctx, func(ctx context.Context) error {
		out = out[:0]
		if err := s.store.LockKeys(ctx); err != nil {
			return err
		}
		rec, ok, err := s.store.LoadInstance(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNoInstance
		}
		stored, err := s.store.ListKeys(ctx)
		if err != nil {
			return err
		}
		for _, p := range purposes {
			steps := domain.PlanRotation(rulesOf(ofPurpose(stored, p)), now, s.opts.Rotation, t)
			applied, err := s.apply(ctx, rec.ID, p, steps, now, master)
			if err != nil {
				return err
			}
			out = append(out, Rotation{Purpose: p, Steps: applied})
		}
		after, err := s.store.ListKeys(ctx)
		if err != nil {
			return err
		}
		for i := range out {
			keys := ofPurpose(after, out[i].Purpose)
			out[i].NextDue = domain.NextDue(rulesOf(keys), s.opts.Rotation)
			for _, k := range domain.Published(keys) {
				out[i].Keys = append(out[i].Keys, publicKey(k))
			}
		}
		return nil
	})
	s.keys.Invalidate()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// apply carries out steps for purpose p at now inside the unit of work and
// audits each.
func (s *Service) apply(ctx context.Context, instanceID ids.ID, p instance.Purpose, steps []domain.Step, now time.Time, master []byte) ([]AppliedStep, error) {
	applied := make([]AppliedStep, 0, len(steps))
	for _, st := range steps {
		a := AppliedStep{Kind: st.Kind, KID: st.KID, Previous: st.Previous}
		var err error
		switch st.Kind {
		case domain.StepRetire:
			err = s.store.RetireKey(ctx, st.KID, now)
		case domain.StepPromote:
			if st.Previous != "" {
				// The M1-32 promotion rule: the old key stops signing now.
				if err = s.store.StartRetiring(ctx, st.Previous, now); err != nil {
					break
				}
			}
			err = s.store.PromoteKey(ctx, st.KID, now)
		case domain.StepCreateActive:
			a.KID, err = s.createKey(ctx, p, instance.KeyActive, now, master)
		case domain.StepCreateNext:
			a.KID, err = s.createKey(ctx, p, instance.KeyNext, now, master)
		default:
			err = errs.Internalf("instance: unknown rotation step")
		}
		if err != nil {
			return nil, err
		}
		if err := s.audit.Record(ctx, rotationEntry(instanceID, p, a)); err != nil {
			return nil, err
		}
		applied = append(applied, a)
	}
	return applied, nil
}

// createKey makes a new Ed25519 key of purpose p in state (next or active),
// seals its private key and stores it; it returns the kid.
func (s *Service) createKey(ctx context.Context, p instance.Purpose, state instance.KeyState, now time.Time, master []byte) (string, error) {
	pub, priv, err := ed25519.GenerateKey(s.random)
	if err != nil {
		return "", errs.Wrap(err, "instance: generating a signing key failed")
	}
	defer clear(priv)
	kid, err := domain.KeyID(pub)
	if err != nil {
		return "", errs.Wrap(err, "instance: deriving the kid failed")
	}
	sealed, err := domain.SealPrivateKey(master, kid, p, priv, s.random)
	if err != nil {
		return "", errs.Wrap(err, "instance: sealing a signing key failed")
	}
	k := StoredKey{Key: domain.Key{KID: kid, State: state, CreatedAt: now}, Purpose: p, PublicKey: pub, Sealed: sealed}
	if state == instance.KeyActive {
		k.ActivatedAt = now
	}
	return kid, s.store.InsertKey(ctx, k)
}

func rotationEntry(instanceID ids.ID, p instance.Purpose, a AppliedStep) auditing.Entry {
	details := []auditing.Detail{
		auditing.Code("purpose", string(p)),
		auditing.Code("step", string(a.Kind)),
		auditing.Code("kid", a.KID),
	}
	if a.Previous != "" {
		details = append(details, auditing.Code("previous_kid", a.Previous))
	}
	return auditing.Entry{
		Action:       string(ActionRotate),
		Actor:        actor.System,
		ResourceKind: "instance",
		ResourceID:   instanceID,
		Outcome:      auditing.Allow,
		Details:      details,
	}
}

func rulesOf(keys []StoredKey) []domain.Key {
	out := make([]domain.Key, len(keys))
	for i, k := range keys {
		out[i] = k.Key
	}
	return out
}
