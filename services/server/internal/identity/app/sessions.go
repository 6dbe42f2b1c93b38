package app

import (
	"context"
	"time"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
)

// SignIn is the input of Service.SignIn.
type SignIn struct {
	// Email and Password as the person typed them.
	Email, Password string
}

// NewSession is a session with its bearer token, shown once.
type NewSession struct {
	// Session is the new session; it counts as stepped up from now.
	Session Session
	// Token is the bearer token ("bts_..."); only its hash is stored.
	Token string
}

// SignIn checks email and password and opens a session of
// identity.session_ttl (identity.session.create, public). The session
// counts as stepped up at sign-in, because the password was just entered
// (the authentication time of RFC 9470).
//
// An unknown email and a wrong password give the same unauthorized error,
// and an unknown email costs the same argon2id hash as a wrong password, so
// neither the answer nor its timing tells whether a person exists; the
// first sign-in of a process also makes that stand-in hash, whatever its
// email (D-ID-10). A stored hash made with other parameters than the
// configured ones is replaced after a successful check.
//
// Errors: unauthorized; internal errors of the store or of the stand-in's
// hash.
func (s *Service) SignIn(ctx context.Context, in SignIn) (NewSession, error) {
	if err := s.check(ctx, authorize.SessionCreate, authorize.Resource{Kind: authorize.KindSession}); err != nil {
		return NewSession{}, err
	}
	dummy, err := s.dummyHash()
	if err != nil {
		return NewSession{}, errs.Wrap(err, "identity: hashing the stand-in password failed")
	}
	creds, found := Credentials{PasswordHash: dummy}, false
	if email, err := domain.NormalizeEmail("/email", in.Email); err == nil {
		c, ok, err := s.store.CredentialsByEmail(ctx, email)
		if err != nil {
			return NewSession{}, err
		}
		if ok {
			creds, found = c, true
		}
	}
	match, err := domain.VerifyPassword(creds.PasswordHash, in.Password)
	if err != nil {
		return NewSession{}, errs.Wrap(err, "identity: a stored password hash does not parse")
	}
	if !found || !match {
		return NewSession{}, errUnauthorized()
	}
	rehash := ""
	if domain.NeedsRehash(creds.PasswordHash, s.opts.PasswordParams) {
		if rehash, err = domain.HashPassword(in.Password, s.opts.PasswordParams, s.random); err != nil {
			return NewSession{}, errs.Wrap(err, "identity: hashing the password failed")
		}
	}
	token, hash, err := domain.NewToken(domain.TokenSession, s.random)
	if err != nil {
		return NewSession{}, errs.Wrap(err, "identity: making a token failed")
	}
	var out NewSession
	err = s.uow.Do(ctx, func(ctx context.Context) error {
		now := s.clock.Now()
		id, err := s.newID(now)
		if err != nil {
			return err
		}
		sess := Session{ID: id, PersonID: creds.PersonID, CreatedAt: now, ExpiresAt: now.Add(s.opts.SessionTTL), SteppedUpAt: now}
		if err := s.store.CreateSession(ctx, sess, hash); err != nil {
			return err
		}
		if rehash != "" {
			if err := s.store.SetPasswordHash(ctx, creds.PersonID, rehash, now); err != nil {
				return err
			}
		}
		out = NewSession{Session: sess, Token: token}
		return nil
	})
	if err != nil {
		return NewSession{}, err
	}
	return out, nil
}

// SignOut revokes the session the request authenticated with
// (identity.session.delete, self). Errors: what the authorizer answers;
// not_found when the principal did not authenticate with a session (a
// personal or app token) or the session ended meanwhile.
func (s *Service) SignOut(ctx context.Context) error {
	p := actor.From(ctx)
	if err := s.check(ctx, authorize.SessionDelete, sessionResource(p)); err != nil {
		return err
	}
	if p.Kind != actor.KindPerson || p.ViaPersonalToken {
		return errs.NotFound()
	}
	return s.uow.Do(ctx, func(ctx context.Context) error {
		ok, err := s.store.RevokeSession(ctx, p.SessionID, p.ID, s.clock.Now())
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		s.forgetTokensAfterCommit(ctx, p.ID)
		return nil
	})
}

// StepUp is the input of Service.StepUp.
type StepUp struct {
	// Password is the person's password, entered again.
	Password string
}

// StepUp re-authenticates the person of the current session with the
// password and sets the session's stepped_up_at to now
// (identity.session.step_up, self); the authorizer then counts it as fresh
// for identity.step_up_max_age. A personal token can never step up: it has
// no session, so the answer is not_found, as for a session that ended.
//
// Errors: what the authorizer answers; not_found without an active
// session; unauthorized for a wrong password (the session stays as it
// was).
func (s *Service) StepUp(ctx context.Context, in StepUp) (Session, error) {
	p := actor.From(ctx)
	if err := s.check(ctx, authorize.SessionStepUp, sessionResource(p)); err != nil {
		return Session{}, err
	}
	if p.Kind != actor.KindPerson || p.ViaPersonalToken {
		return Session{}, errs.NotFound()
	}
	sess, ok, err := s.store.ActiveSession(ctx, p.SessionID, p.ID, s.clock.Now())
	if err != nil {
		return Session{}, err
	}
	if !ok {
		return Session{}, errs.NotFound()
	}
	creds, ok, err := s.store.CredentialsByID(ctx, p.ID)
	if err != nil {
		return Session{}, err
	}
	if !ok {
		return Session{}, errs.NotFound()
	}
	match, err := domain.VerifyPassword(creds.PasswordHash, in.Password)
	if err != nil {
		return Session{}, errs.Wrap(err, "identity: a stored password hash does not parse")
	}
	if !match {
		return Session{}, errUnauthorized()
	}
	err = s.uow.Do(ctx, func(ctx context.Context) error {
		now := s.clock.Now()
		ok, err := s.store.SetSteppedUp(ctx, sess.ID, now)
		if err != nil {
			return err
		}
		if !ok {
			return errs.NotFound()
		}
		s.forgetTokensAfterCommit(ctx, sess.PersonID)
		sess.SteppedUpAt = now
		return nil
	})
	if err != nil {
		return Session{}, err
	}
	return sess, nil
}

// Me is the input-free answer of Service.Me.
type Me struct {
	// Person is the person who asks.
	Person Person
	// ViaPersonalToken is true when the request used a personal token.
	ViaPersonalToken bool
	// SteppedUpAt is the session's last step-up; zero for a personal token.
	SteppedUpAt time.Time
}

// Me returns the person behind the request (identity.me.read, self).
// Errors: what the authorizer answers; not_found for a principal that is
// no person (an app).
func (s *Service) Me(ctx context.Context) (Me, error) {
	p := actor.From(ctx)
	if err := s.check(ctx, authorize.MeRead, authorize.Resource{Kind: authorize.KindPerson, ID: p.ID, Owner: p.ID}); err != nil {
		return Me{}, err
	}
	if p.Kind != actor.KindPerson {
		return Me{}, errs.NotFound()
	}
	person, ok, err := s.store.PersonByID(ctx, p.ID)
	if err != nil {
		return Me{}, err
	}
	if !ok {
		return Me{}, errs.NotFound()
	}
	return Me{Person: person, ViaPersonalToken: p.ViaPersonalToken, SteppedUpAt: p.SteppedUpAt}, nil
}

// sessionResource is the current session of p as a resource it owns.
func sessionResource(p actor.Principal) authorize.Resource {
	return authorize.Resource{Kind: authorize.KindSession, ID: p.SessionID, Owner: p.ID}
}
