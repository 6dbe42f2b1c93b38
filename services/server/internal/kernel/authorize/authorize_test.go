package authorize_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/authorize"
	"bothy/server/internal/kernel/errs"
)

func TestDecisionErr(t *testing.T) {
	t.Parallel()
	require.NoError(t, authorize.Decision{Outcome: authorize.Allow}.Err())
	for outcome, code := range map[authorize.Outcome]errs.Code{
		authorize.Unauthorized:   errs.CodeUnauthorized,
		authorize.StepUpRequired: errs.CodeStepUpRequired,
		authorize.Forbidden:      errs.CodeForbidden,
		authorize.NotFound:       errs.CodeNotFound,
	} {
		err := authorize.Decision{Outcome: outcome, Reason: "scope_missing"}.Err()
		require.Equal(t, code, errs.CodeOf(err), outcome)
	}
	require.Empty(t, errs.ReasonOf(authorize.Decision{Outcome: authorize.NotFound, Reason: "not_self"}.Err()),
		"not_found never reveals why")
	require.Equal(t, "scope_missing", errs.ReasonOf(authorize.Decision{Outcome: authorize.Forbidden, Reason: "scope_missing"}.Err()))
}

func TestFilterMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	require.False(t, authorize.InFilterMode(ctx))
	require.True(t, authorize.InFilterMode(authorize.Filter(ctx)))
}
