// Package app holds the use cases of the apps module, one file per use
// case, in three rooms (ADR 0072):
//
//   - The apps platform (Service, service.go; ports in ports.go): register,
//     list and read apps; install, uninstall, suspend and resume them; set
//     their scopes; manage their grants (register_app.go, install_app.go,
//     ...).
//   - The owner side of outgoing webhooks (WebhookService,
//     webhook_service.go; ports in webhook_ports.go): the use cases of the
//     port apps.Webhooks (create_subscription.go, update_subscription.go,
//     delete_subscription.go, list_subscriptions.go, list_deliveries.go,
//     redeliver.go, resume_installation.go) and the InstallationHooks the
//     apps platform calls (installation_hooks.go).
//   - The delivery path (Deliveries, deliveries.go; ports in
//     delivery_ports.go): the consumer webhooks (handle_event.go,
//     handle_lost.go) and the job apps.webhook_deliver (deliver.go: the run
//     and its send; chain.go: the budget and the step of one unit of work;
//     claim.go, gap.go, sign.go, record.go), the stalled head (stalled.go),
//     the retention purge (purge_deliveries.go) and the delivery metrics
//     (delivery_metrics.go).
//
// Every use case of the first two rooms is one unit of work in this order
// (docs/spec/07-permissions.md 4.2): authorize the acting principal of the
// context (kernel/authorize.Check with Resource{Kind: app, ID: app id});
// act; record the allow in the audit trail with typed details; append
// app.installation.updated when the installation's state or scopes changed
// (as the last write, ADR 0051). A denial is audited by the authorizer and
// rolls the unit of work back. Apps are visible to owners only, so anyone
// else gets not_found, exactly like an unknown app ID (AZ-P4). The rules
// themselves are pure functions of internal/apps/domain (admission) and
// internal/apps/domain/webhook (delivery); a use case reads, asks the rule
// for the change and persists it.
package app
