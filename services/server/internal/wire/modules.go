package wire

import (
	"crypto/x509"
	"errors"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"bothy/server/internal/apps/adapters/deliveryjobs"
	"bothy/server/internal/apps/adapters/hmackey"
	appspg "bothy/server/internal/apps/adapters/postgres"
	"bothy/server/internal/apps/adapters/webhookhttp"
	appsapp "bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain/webhook"
	azpg "bothy/server/internal/authz/adapters/postgres"
	azapp "bothy/server/internal/authz/app"
	chatpg "bothy/server/internal/chat/adapters/postgres"
	chatapp "bothy/server/internal/chat/app"
	idpg "bothy/server/internal/identity/adapters/postgres"
	idapp "bothy/server/internal/identity/app"
	iddomain "bothy/server/internal/identity/domain"
	instmaster "bothy/server/internal/instance/adapters/masterkey"
	instpg "bothy/server/internal/instance/adapters/postgres"
	instapp "bothy/server/internal/instance/app"
	instdomain "bothy/server/internal/instance/domain"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/watched"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/egress"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/secrets"
	syncpg "bothy/server/internal/sync/adapters/postgres"
)

// Modules are the business modules of one process, each built once over the
// same pool, unit of work, clock and audit recorder. The role assembly
// (Process) mounts their HTTP handlers and jobs; the test harness uses the
// same constructor, so tests run the modules exactly as production wires them.
type Modules struct {
	// Clock is the source of now of every module.
	Clock clock.Clock
	// UnitOfWork runs the use cases' transactions.
	UnitOfWork *pg.UnitOfWork
	// Audit records audit entries.
	Audit auditing.Recorder
	// Events appends durable events; Log reads them.
	Events *syncpg.Appender
	Log    *syncpg.Log

	// Instance is the instance module (record, key rotation); Keys its keys.
	Instance *instapp.Service
	Keys     *instapp.Keys
	// Authorizer decides every action; Grants manages grants.
	Authorizer *azapp.Authorizer
	Grants     *azapp.Grants
	// Chat is the chat module.
	Chat *chatapp.Service
	// Identity is the identity module (people, sessions, tokens, the
	// authenticator).
	Identity *idapp.Service
	// Apps is the apps module; Webhooks its outgoing webhook use cases
	// (also the installation hooks of Apps).
	Apps     *appsapp.Service
	Webhooks *appsapp.WebhookService
	// Recovery is recoverWebhookDeliveries (ADR 0079); TestSends is
	// sendWebhookTest (ADR 0080), which sends through WebhookEgress from
	// the api process.
	Recovery  *appsapp.Recovery
	TestSends *appsapp.TestSends
	// Deliveries is the delivery engine of outgoing webhooks: the handler of
	// the consumer webhooks and the body of the job apps.webhook_deliver.
	Deliveries *appsapp.Deliveries
	// Backlog sets the webhook backlog gauges; the worker roles refresh it
	// every metrics.gauge_interval.
	Backlog *appsapp.BacklogGauges
	// WebhookEgress is the egress client the deliveries send through; the
	// process swaps its roots when egress.extra_ca_file changes
	// (ca_reload.go).
	WebhookEgress *egress.Client
	// Changes is the hub of the facts the modules keep in memory (token
	// owners, standings, channels; ADR 0103); the process's watch of the
	// database reports to it.
	Changes *watched.Hub
}

// ModuleDeps are what BuildModules needs besides the configuration.
type ModuleDeps struct {
	// Pool is connected as bothy_app.
	Pool *pgxpool.Pool
	// Secrets resolves secret references.
	Secrets *secrets.Provider
	// Clock is the source of now.
	Clock clock.Clock
	// Meter receives the modules' metrics.
	Meter metric.MeterProvider
	// Jobs inserts the modules' jobs (apps.webhook_deliver) in their units
	// of work.
	Jobs *jobs.Inserter
	// Tracer receives the spans of outgoing deliveries (webhook.deliver).
	Tracer trace.TracerProvider
	// Logger receives the modules' log lines.
	Logger *slog.Logger
	// Resolver resolves the host names of webhook targets; nil means the
	// system resolver. Tests and the demo pass a fake resolver (the egress
	// guard still checks every address it returns).
	Resolver egress.Resolver
}

// BuildModules builds every module from cfg. It opens nothing and starts
// nothing; errors name the configuration key at fault.
func BuildModules(cfg *Config, d ModuleDeps) (*Modules, error) {
	if d.Pool == nil || d.Secrets == nil || d.Clock == nil || d.Meter == nil || d.Jobs == nil || d.Tracer == nil || d.Logger == nil {
		return nil, errors.New("wire: BuildModules needs a pool, a secret provider, a clock, a meter and a tracer provider, a job inserter and a logger")
	}
	m := &Modules{
		Clock:      d.Clock,
		UnitOfWork: pg.NewUnitOfWork(d.Pool, cfg.Database.TxRetryMax, cfg.Database.LockTimeout),
		Audit:      auditpg.New(d.Pool, d.Clock),
		Log:        syncpg.NewLog(d.Pool),
		Changes:    &watched.Hub{},
	}
	var err error
	if m.Events, err = syncpg.NewAppender(d.Clock, syncpg.NewWaker(d.Pool, d.Logger, cfg.Consumer.PollInterval),
		syncpg.AppenderOptions{PayloadTextMaxBytes: cfg.Sync.PayloadTextMaxBytes}); err != nil {
		return nil, err
	}

	// instance
	master := instmaster.New(d.Secrets, cfg.Instance.SigningKeysMasterKeyRef)
	instStore := instpg.New(d.Pool)
	if m.Keys, err = instapp.NewKeys(instStore, master, d.Clock, instapp.KeysOptions{CacheTTL: cfg.Instance.KeyCacheTTL}); err != nil {
		return nil, err
	}
	if m.Instance, err = instapp.New(instapp.Deps{
		UnitOfWork: m.UnitOfWork, Store: instStore, Keys: m.Keys, Master: master, Audit: m.Audit, Clock: d.Clock,
	}, instapp.Options{
		Name:     cfg.Instance.Name,
		Rotation: instdomain.Policy{PublishAhead: cfg.Agent.JWKSMaxAge, MaxAge: cfg.Instance.SigningKeyMaxAge},
	}); err != nil {
		return nil, err
	}

	// chat and authz: the authorizer reads memberships from chat, and chat
	// asks the authorizer.
	chatStore := chatpg.NewStore(d.Pool)
	grantStore := azpg.NewGrants(d.Pool)
	if m.Authorizer, err = azapp.NewAuthorizer(azapp.Deps{
		Grants: grantStore, Memberships: chatStore, Recorder: m.Audit, Clock: d.Clock, Meter: d.Meter, Changes: m.Changes,
	}, azapp.Options{StepUpMaxAge: cfg.Identity.StepUpMaxAge,
		StandingCacheTTL: cfg.Authz.StandingCacheTTL, StandingCacheEntries: cfg.Authz.StandingCacheEntries}); err != nil {
		return nil, err
	}
	if m.Grants, err = azapp.NewGrants(grantStore, d.Clock, m.Changes); err != nil {
		return nil, err
	}
	if m.Chat, err = chatapp.NewService(chatapp.Deps{
		Store: chatStore, UnitOfWork: m.UnitOfWork, Authorizer: m.Authorizer, Events: m.Events, Audit: m.Audit, Clock: d.Clock,
		Changes: m.Changes,
	}, chatapp.Options{
		ChannelCacheTTL:     cfg.Chat.ChannelCacheTTL,
		ChannelCacheEntries: cfg.Chat.ChannelCacheEntries,
		MessageMaxBytes:     int(cfg.Chat.MessageMaxBytes),
		NameMaxChars:        cfg.Chat.NameMaxChars,
		PageSizeDefault:     cfg.Chat.PageSizeDefault,
		PageSizeMax:         cfg.Chat.PageSizeMax,
		PostGatherMax:       cfg.Chat.PostGatherMax,
		PostGatherGroups:    cfg.Chat.PostGatherGroups,
	}); err != nil {
		return nil, err
	}

	// identity and apps: identity reads app facts from apps, and apps
	// creates app principals and tokens through identity.
	appsStore := appspg.New(d.Pool)
	subscriptionStore := appspg.NewSubscriptionStore(d.Pool)
	idOpts, err := IdentityOptions(cfg)
	if err != nil {
		return nil, err
	}
	if m.Identity, err = idapp.New(idapp.Deps{
		UnitOfWork: m.UnitOfWork, Store: idpg.New(d.Pool), Authorizer: m.Authorizer, Audit: m.Audit, AppFacts: appsStore, Clock: d.Clock,
		Changes: m.Changes,
	}, idOpts); err != nil {
		return nil, err
	}
	hmacMaster := hmackey.New(d.Secrets, cfg.Webhook.HMACMasterKeyRef)
	scheduler := deliveryjobs.NewScheduler(d.Jobs)
	if m.Webhooks, err = appsapp.NewWebhookService(appsapp.WebhookDeps{
		UnitOfWork: m.UnitOfWork, Authorizer: m.Authorizer, Audit: m.Audit, Apps: appsStore, Subscriptions: subscriptionStore,
		Keys: m.Keys, Log: m.Log, MasterKey: hmacMaster,
		Scheduler: scheduler, Clock: d.Clock,
	}, appsapp.WebhookOptions{
		AllowedHosts: cfg.Webhook.AllowedHosts, PageSizeDefault: cfg.Webhook.PageSizeDefault, PageSizeMax: cfg.Webhook.PageSizeMax,
		RateLimitMax: cfg.Webhook.RateLimitMax,
	}); err != nil {
		return nil, err
	}
	if m.Apps, err = appsapp.New(appsapp.Deps{
		UnitOfWork: m.UnitOfWork, Authorizer: m.Authorizer, Audit: m.Audit, Events: m.Events,
		Principals: m.Identity, Grants: m.Grants, Store: appsStore, Clock: d.Clock, Hooks: m.Webhooks,
	}, appsapp.Options{AllowedHosts: cfg.Webhook.AllowedHosts}); err != nil {
		return nil, err
	}

	// The delivery engine sends through the webhook egress client: hosts of
	// webhook.allowed_hosts only, private addresses only by an
	// egress.allowed_hosts entry with allow_private, https, no redirects,
	// webhook.delivery_timeout per attempt (ADR 0022).
	sender, webhookEgress, err := newWebhookSender(cfg, d)
	if err != nil {
		return nil, err
	}
	if m.Recovery, err = appsapp.NewRecovery(appsapp.RecoveryDeps{
		UnitOfWork: m.UnitOfWork, Authorizer: m.Authorizer, Audit: m.Audit, Installations: appsStore, Store: subscriptionStore,
		Log: m.Log, Scheduler: scheduler, Clock: d.Clock,
	}, appsapp.RecoveryOptions{MaxDeliveries: cfg.Webhook.RecoverMaxDeliveries, EventRetention: cfg.Sync.EventRetention}); err != nil {
		return nil, err
	}
	if m.TestSends, err = appsapp.NewTestSends(appsapp.TestSendDeps{
		UnitOfWork: m.UnitOfWork, Authorizer: m.Authorizer, Audit: m.Audit, Installations: appsStore, Store: subscriptionStore,
		Keys: m.Keys, State: m.Instance, Master: hmacMaster, Sender: sender, Clock: d.Clock,
	}, appsapp.TestSendOptions{DeliveryTimeout: cfg.Webhook.DeliveryTimeout, SecretRotationOverlap: cfg.Webhook.SecretRotationOverlap}); err != nil {
		return nil, err
	}
	deliveryStore := appspg.NewDeliveryStore(d.Pool)
	if m.Backlog, err = appsapp.NewBacklogGauges(appsapp.BacklogDeps{
		Reader: deliveryStore, Meter: d.Meter, Clock: d.Clock,
	}, appsapp.BacklogOptions{LagThreshold: cfg.Metrics.DeliveryLagThreshold}); err != nil {
		return nil, err
	}
	m.WebhookEgress = webhookEgress
	// The delivery job's statements find their rows by keys whatever the
	// plan; under generic plans they are not planned anew at every call
	// once the tables grow (D-SQ-19).
	if m.Deliveries, err = appsapp.NewDeliveries(appsapp.DeliveryDeps{
		UnitOfWork: m.UnitOfWork.GenericPlans(), Store: deliveryStore, Events: m.Log, Authorizer: m.Authorizer, Router: m.Authorizer,
		Audit: m.Audit, Keys: m.Keys, State: m.Instance, Master: hmacMaster, Sender: sender, Scheduler: scheduler,
		Clock: d.Clock, Logger: d.Logger, Meter: d.Meter,
	}, appsapp.DeliveryOptions{
		Retry: webhook.RetryConfig{
			Base: cfg.Webhook.RetryBackoffBase, Cap: cfg.Webhook.RetryBackoffCap, MaxAge: cfg.Webhook.RetryMaxAge,
		},
		DeliveryTimeout:           cfg.Webhook.DeliveryTimeout,
		LeaseRecordAllowance:      cfg.Webhook.LeaseRecordAllowance,
		MaxConsecutiveFailures:    cfg.Webhook.MaxConsecutiveFailures,
		MaxPendingPerSubscription: cfg.Webhook.MaxPendingPerSubscription,
		SecretRotationOverlap:     cfg.Webhook.SecretRotationOverlap,
		ChainMaxDeliveries:        cfg.Webhook.ChainMaxDeliveries,
		ChainMaxDuration:          cfg.Webhook.ChainMaxDuration,
		BatchMaxDeliveries:        cfg.Webhook.BatchMaxDeliveries,
		BatchMaxDuration:          cfg.Webhook.BatchMaxDuration,
		RunMaxSubscriptions:       cfg.Webhook.RunMaxSubscriptions,
		RunGatherPause:            cfg.Webhook.RunGatherPause,
		RoundInsertMaxDeliveries:  cfg.Webhook.RoundInsertMaxDeliveries,
	}); err != nil {
		return nil, err
	}
	return m, nil
}

// newWebhookSender builds the egress client of purpose webhook and the
// sender over it.
func newWebhookSender(cfg *Config, d ModuleDeps) (*webhookhttp.Sender, *egress.Client, error) {
	roots, err := rootCAs(cfg.Egress.ExtraCAFile)
	if err != nil {
		return nil, nil, err
	}
	client, err := egress.New(egress.Options{
		Purpose:             "webhook",
		Hosts:               egress.NewHostPolicy(cfg.Webhook.AllowedHosts),
		Private:             cfg.Egress.AllowedHosts,
		Schemes:             []string{"https"},
		Redirects:           egress.RedirectNever,
		Timeout:             cfg.Webhook.DeliveryTimeout,
		MaxResponseBytes:    cfg.Egress.MaxResponseBytes,
		MaxIdleConnsPerHost: cfg.Egress.MaxIdleConnsPerHost,
		IdleConnTimeout:     cfg.Egress.IdleConnTimeout,
		RootCAs:             roots,
	}, egress.Deps{Resolver: d.Resolver, Meter: d.Meter, Logger: d.Logger})
	if err != nil {
		return nil, nil, err
	}
	return webhookhttp.NewSender(client, d.Tracer), client, nil
}

// rootCAs returns the system roots plus the PEM certificates of
// egress.extra_ca_file when it is set.
func rootCAs(extra string) (*x509.CertPool, error) {
	if extra == "" {
		return systemRoots(), nil
	}
	pem, err := os.ReadFile(extra)
	if err != nil {
		return nil, errors.New("egress.extra_ca_file cannot be read")
	}
	return rootCAsWith(pem)
}

// rootCAsWith returns the system roots plus the PEM certificates in pem.
func rootCAsWith(pem []byte) (*x509.CertPool, error) {
	pool := systemRoots()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("egress.extra_ca_file holds no PEM certificate")
	}
	return pool, nil
}

// systemRoots returns a copy of the system pool, or an empty pool where the
// system has none.
func systemRoots() *x509.CertPool {
	pool, err := x509.SystemCertPool()
	if err != nil {
		return x509.NewCertPool()
	}
	return pool
}

// IdentityOptions returns the options of the identity module from cfg; an
// error names the identity.password_hash_* keys when they do not combine.
func IdentityOptions(cfg *Config) (idapp.Options, error) {
	params, err := iddomain.NewParams(cfg.Identity.PasswordHashMemory, cfg.Identity.PasswordHashIterations, cfg.Identity.PasswordHashParallelism)
	if err != nil {
		return idapp.Options{}, err
	}
	return idapp.Options{
		SessionTTL:        cfg.Identity.SessionTTL,
		TokenCacheTTL:     cfg.Identity.TokenCacheTTL,
		TokenCacheEntries: cfg.Identity.TokenCacheEntries,
		PasswordMinLength: cfg.Identity.PasswordMinLength,
		PasswordParams:    params,
	}, nil
}
