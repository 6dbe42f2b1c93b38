package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/authz/domain"
)

func TestEveryGrantableScopeSaysWhatItAllows(t *testing.T) {
	t.Parallel()
	for _, s := range domain.Scopes() {
		require.NotEmpty(t, domain.ScopeDoc(s), "scope %s", s)
	}
	require.Empty(t, domain.ScopeDoc(domain.ScopeNone), "none is no grantable scope")
	require.Empty(t, domain.ScopeDoc("messages:delete"), "an unknown scope has no doc")
	require.NotContains(t, domain.Scopes(), domain.ScopeNone, "none is not grantable")
}
