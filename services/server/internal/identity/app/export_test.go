package app

import (
	"context"

	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/ids"
)

// CreateAgentPrincipal creates an agent principal (principals and agents
// rows). The agent transport is not built yet, so only tests create agents
// and the method lives in a test file (D-CL-16). Errors as for
// CreateAppPrincipal.
func (s *Service) CreateAgentPrincipal(ctx context.Context, displayName string) (ids.ID, error) {
	return s.createPrincipal(ctx, actor.KindAgent, displayName)
}
