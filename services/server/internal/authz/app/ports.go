// Package app holds the use cases of the authorization module: the
// Authorizer (kernel/authorize.Authorizer over the pure rules of
// internal/authz/domain) and the Grants service (authz.Grants), with the
// outgoing ports they need.
package app

import (
	"context"

	"bothy/server/internal/authz"
	"bothy/server/internal/authz/domain"
	"bothy/server/internal/kernel/ids"
)

// Holders is the result of GrantStore.HoldersIn.
type Holders struct {
	// ByPlace names the principals holding a grant on each place.
	ByPlace map[domain.Place][]ids.ID
	// Facts are all the grants of every principal of ByPlace.
	Facts map[ids.ID][]domain.GrantFact
}

// GrantStore persists grants. Every method runs in the unit of work of ctx
// when there is one.
type GrantStore interface {
	// GrantFactsOf returns the grants of each of principalIDs as decision
	// facts, read with one statement; a principal without grants maps to
	// an empty slice.
	GrantFactsOf(ctx context.Context, principalIDs []ids.ID) (map[ids.ID][]domain.GrantFact, error)
	// HoldersIn returns, for each of places, the principals holding a
	// grant on its space (any of its channels or the whole space) when its
	// channel is Zero, else on its channel or on the whole space; ordered
	// by id, no duplicates. Every place is a key of ByPlace, a place
	// nobody holds a grant on with an empty slice. Facts holds every grant
	// of every principal named, as decision facts. One statement reads
	// both (D-M2-26-81).
	HoldersIn(ctx context.Context, places []domain.Place) (Holders, error)
	// InsertGrant stores g. Errors (*errs.Error): validation_failed with
	// /space_id or /channel_id (code not_found) for an unknown space or a
	// channel outside the space, not_found for an unknown subject,
	// conflict grant_exists for a second grant on the same place.
	InsertGrant(ctx context.Context, g authz.Grant) error
	// DeleteGrant deletes the grant grantID of subjectID and reports
	// whether there was one.
	DeleteGrant(ctx context.Context, subjectID, grantID ids.ID) (bool, error)
	// ListGrants returns the grants of subjectID ordered by created_at,
	// then id.
	ListGrants(ctx context.Context, subjectID ids.ID) ([]authz.Grant, error)
}
