package wire

import (
	"bothy/server/api"
	appshttp "bothy/server/internal/apps/adapters/httpapi"
	azdomain "bothy/server/internal/authz/domain"
	chathttp "bothy/server/internal/chat/adapters/httpapi"
	idhttp "bothy/server/internal/identity/adapters/httpapi"
	insthttp "bothy/server/internal/instance/adapters/httpapi"
	"bothy/server/internal/platform/buildinfo"
	"bothy/server/internal/platform/httpserver"
)

// The handler sets of the modules, under names of their own so that the
// composite server can embed them side by side.
type (
	instanceAPI = insthttp.Server
	identityAPI = idhttp.Server
	chatAPI     = chathttp.Handler
	appsAPI     = appshttp.Handlers
	webhookAPI  = appshttp.WebhookHandlers
	recoveryAPI = appshttp.RecoveryHandlers
	testSendAPI = appshttp.TestSendHandlers
)

// apiServer is the one strict server of the generated API: every module's
// handler set embedded, each serving its own operations. A missing handler
// does not compile; VerifyRegistrations checks the rest at start.
type apiServer struct {
	*instanceAPI
	*identityAPI
	*chatAPI
	*appsAPI
	*webhookAPI
	*recoveryAPI
	*testSendAPI
}

var _ api.StrictServerInterface = (*apiServer)(nil)

// newAPIServer builds the handler sets over the modules.
func newAPIServer(cfg *Config, m *Modules, cursors *httpserver.Cursors) (*apiServer, error) {
	inst, err := insthttp.New(m.Instance, m.Keys, m.Authorizer, insthttp.Options{JWKSMaxAge: cfg.Agent.JWKSMaxAge, Version: buildinfo.Version()})
	if err != nil {
		return nil, err
	}
	chat, err := chathttp.NewHandler(m.Chat, cursors)
	if err != nil {
		return nil, err
	}
	webhooks, err := appshttp.NewWebhookHandlers(m.Webhooks, cursors)
	if err != nil {
		return nil, err
	}
	recovery, err := appshttp.NewRecoveryHandlers(m.Recovery)
	if err != nil {
		return nil, err
	}
	tests, err := appshttp.NewTestSendHandlers(m.TestSends)
	if err != nil {
		return nil, err
	}
	return &apiServer{instanceAPI: inst, identityAPI: idhttp.New(m.Identity), chatAPI: chat,
		appsAPI: appshttp.NewHandlers(m.Apps), webhookAPI: webhooks, recoveryAPI: recovery, testSendAPI: tests}, nil
}

// mountAPI verifies the registrations (AZ-P1: every enabled operation has a
// handler and an action of the catalogue that is not deferred) and mounts
// the generated router on hs.
func mountAPI(hs *httpserver.Server, srv *apiServer) error {
	if err := api.VerifyRegistrations(api.Operations(), azdomain.IDs(), azdomain.DeferredIDs(), srv); err != nil {
		return err
	}
	return api.Mount(hs, srv)
}
