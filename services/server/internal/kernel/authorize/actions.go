package authorize

// The action ids of the catalogue. The full entries (resource kind, right,
// owner only, step-up, audit, effect, app scope) live in internal/authz, which
// renders docs/spec/actions.yaml; a test there proves every constant here has
// an entry and every entry a constant.
const (
	InstanceDiscoveryRead Action = "instance.discovery.read"
	InstanceRead          Action = "instance.read"
	// InstanceSigningKeyRotate is the system action that audits every change
	// of the server signing keys (creation, promotion, retirement).
	InstanceSigningKeyRotate Action = "instance.signing_key.rotate"

	SessionCreate       Action = "identity.session.create"
	SessionDelete       Action = "identity.session.delete"
	SessionStepUp       Action = "identity.session.step_up"
	MeRead              Action = "identity.me.read"
	PersonalTokenRead   Action = "identity.token.read"
	PersonalTokenManage Action = "identity.token.manage"
	PersonManage        Action = "identity.person.manage"

	SpaceRead     Action = "space.read"
	SpaceManage   Action = "space.manage"
	ChannelRead   Action = "channel.read"
	ChannelManage Action = "channel.manage"
	MessageRead   Action = "message.read"
	MessagePost   Action = "message.post"
	MessageUpdate Action = "message.update"
	MessageDelete Action = "message.delete"

	AppRegister    Action = "app.register"
	AppRead        Action = "app.read"
	AppInstall     Action = "app.install"
	AppUninstall   Action = "app.uninstall"
	AppSuspend     Action = "app.suspend"
	AppResume      Action = "app.resume"
	AppSetScopes   Action = "app.set_scopes"
	AppGrantRead   Action = "app.grant.read"
	AppGrantManage Action = "app.grant.manage"

	WebhookOutRead       Action = "webhook_out.read"
	WebhookOutManage     Action = "webhook_out.manage"
	WebhookOutRedeliver  Action = "webhook_out.redeliver"
	WebhookOutDeliver    Action = "webhook_out.deliver"
	WebhookOutTransition Action = "webhook_out.transition"
	// WebhookOutTest sends one signed webhook.test request to a
	// subscription's address (sendWebhookTest), outside the delivery order
	// (ADR 0080).
	WebhookOutTest Action = "webhook_out.test"
)

// ReceiveSelf is the receive action of personal events: only the audience
// principal receives them (docs/spec/03-data-model.md event_log.receive_action).
const ReceiveSelf Action = "self"
