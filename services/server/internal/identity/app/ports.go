package app

import (
	"context"
	"time"

	"bothy/server/internal/identity/domain"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
)

// Person is a person as the use cases see it.
type Person struct {
	// ID is the principal ID of the person.
	ID ids.ID
	// Email is the normalized address (domain.NormalizeEmail).
	Email string
	// DisplayName is the principal's display name.
	DisplayName string
	// Role is owner or member.
	Role actor.Role
	// CreatedAt is when the person was created.
	CreatedAt time.Time
}

// Credentials are what a sign-in or step-up checks.
type Credentials struct {
	// PersonID names the person.
	PersonID ids.ID
	// PasswordHash is the stored argon2id hash (domain.HashPassword).
	PasswordHash string
}

// Session is a row of sessions without its token hash.
type Session struct {
	// ID identifies the session; it is the principal's SessionID.
	ID ids.ID
	// PersonID is the person signed in.
	PersonID ids.ID
	// CreatedAt is the sign-in; ExpiresAt is CreatedAt + identity.session_ttl.
	CreatedAt, ExpiresAt time.Time
	// SteppedUpAt is the last time the password was entered in this session.
	SteppedUpAt time.Time
}

// PersonalToken is a row of personal_tokens without its token hash.
type PersonalToken struct {
	// ID identifies the token; it is the principal's SessionID.
	ID ids.ID
	// PersonID is the holder.
	PersonID ids.ID
	// Name is the holder's label for the token.
	Name string
	// CreatedAt is when the token was made.
	CreatedAt time.Time
	// ExpiresAt is when it stops working; zero for never.
	ExpiresAt time.Time
}

// TokenOwner is what a token lookup finds: the row and its principal.
type TokenOwner struct {
	// ID is the session or token ID.
	ID ids.ID
	// PrincipalID is the person or app principal.
	PrincipalID ids.ID
	// Role is the person's role; empty for apps.
	Role actor.Role
	// SteppedUpAt is the session's last step-up; zero for tokens.
	SteppedUpAt time.Time
	// ExpiresAt is when the session or personal token expires; zero for
	// a personal token without expiry and for app tokens (which do not
	// expire).
	ExpiresAt time.Time
}

// PeopleStore persists people.
type PeopleStore interface {
	// CreatePerson inserts the principal and the person with passwordHash.
	// An email that is taken gives errs.Conflict(ReasonEmailTaken).
	CreatePerson(ctx context.Context, p Person, passwordHash string) error
	// PersonByID returns the person; false when id is no person.
	PersonByID(ctx context.Context, id ids.ID) (Person, bool, error)
	// CredentialsByEmail returns the credentials of the person with the
	// normalized email; false when there is none.
	CredentialsByEmail(ctx context.Context, email string) (Credentials, bool, error)
	// CredentialsByID returns the credentials of the person id.
	CredentialsByID(ctx context.Context, id ids.ID) (Credentials, bool, error)
	// SetPasswordHash replaces the password hash of the person id.
	SetPasswordHash(ctx context.Context, id ids.ID, hash string, now time.Time) error
	// CountOwners returns how many people have the role owner.
	CountOwners(ctx context.Context) (int, error)
}

// SessionStore persists sessions.
type SessionStore interface {
	// CreateSession inserts s with the hash of its token.
	CreateSession(ctx context.Context, s Session, hash domain.TokenHash) error
	// ActiveSession returns the session id of personID when it is neither
	// revoked nor expired at now.
	ActiveSession(ctx context.Context, id, personID ids.ID, now time.Time) (Session, bool, error)
	// SetSteppedUp sets stepped_up_at of the active session id to at; false
	// when the session is no longer active.
	SetSteppedUp(ctx context.Context, id ids.ID, at time.Time) (bool, error)
	// RevokeSession revokes the active session id of personID at at; false
	// when there is no such active session.
	RevokeSession(ctx context.Context, id, personID ids.ID, at time.Time) (bool, error)
}

// TokenStore persists personal and app tokens.
type TokenStore interface {
	// CreatePersonalToken inserts t with the hash of its token.
	CreatePersonalToken(ctx context.Context, t PersonalToken, hash domain.TokenHash) error
	// ActivePersonalTokens lists the tokens of personID that are neither
	// revoked nor expired at now, newest first.
	ActivePersonalTokens(ctx context.Context, personID ids.ID, now time.Time) ([]PersonalToken, error)
	// ActivePersonalToken returns the token id when it is neither revoked
	// nor expired at now.
	ActivePersonalToken(ctx context.Context, id ids.ID, now time.Time) (PersonalToken, bool, error)
	// RevokePersonalToken revokes the active token id at at; false when it
	// is no longer active.
	RevokePersonalToken(ctx context.Context, id ids.ID, at time.Time) (bool, error)
	// CreateAppToken inserts an app token of principalID.
	CreateAppToken(ctx context.Context, id, principalID ids.ID, hash domain.TokenHash, now time.Time) error
	// RevokeAppTokens revokes every unrevoked token of principalID at at.
	RevokeAppTokens(ctx context.Context, principalID ids.ID, at time.Time) error
	// LookupToken finds the unrevoked, unexpired (at now) session or token
	// of kind with hash, with its principal.
	LookupToken(ctx context.Context, kind domain.TokenKind, hash domain.TokenHash, now time.Time) (TokenOwner, bool, error)
}

// PrincipalStore persists principals that are not people.
type PrincipalStore interface {
	// CreatePrincipal inserts a principal of kind (app or agent).
	CreatePrincipal(ctx context.Context, id ids.ID, kind actor.Kind, displayName string, now time.Time) error
	// CreateAgent inserts the agents row of an agent principal.
	CreateAgent(ctx context.Context, id ids.ID, now time.Time) error
	// PrincipalKind returns the kind of principal id; false when unknown.
	PrincipalKind(ctx context.Context, id ids.ID) (actor.Kind, bool, error)
}

// Store is everything the identity use cases persist. Every method joins
// the unit of work of ctx when there is one.
type Store interface {
	PeopleStore
	SessionStore
	TokenStore
	PrincipalStore
}
