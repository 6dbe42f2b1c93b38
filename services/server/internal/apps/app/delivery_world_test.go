package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/apps"
	"bothy/server/internal/apps/adapters/deliveryjobs"
	"bothy/server/internal/apps/adapters/hmackey"
	appspg "bothy/server/internal/apps/adapters/postgres"
	"bothy/server/internal/apps/adapters/webhookhttp"
	"bothy/server/internal/apps/app"
	"bothy/server/internal/apps/domain"
	"bothy/server/internal/apps/domain/webhook"
	"bothy/server/internal/apps/webhookstest"
	azpg "bothy/server/internal/authz/adapters/postgres"
	azapp "bothy/server/internal/authz/app"
	chatpg "bothy/server/internal/chat/adapters/postgres"
	chatapp "bothy/server/internal/chat/app"
	"bothy/server/internal/instance"
	"bothy/server/internal/kernel/actor"
	"bothy/server/internal/kernel/auditing"
	"bothy/server/internal/kernel/auditing/audittest"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/kernel/ids"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/egress"
	"bothy/server/internal/platform/egress/egresstest"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/otel/oteltest"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/pg/pgtest"
	eventsync "bothy/server/internal/sync"
	syncpg "bothy/server/internal/sync/adapters/postgres"
	syncapp "bothy/server/internal/sync/app"
	"bothy/server/internal/wire"
	"bothy/server/test/harness"
)

// The delivery world of these tests is the world of
// docs/spec/07-permissions.md 10 and 11.1 (harness.BuildMatrixWorld with
// the modules of wire.BuildModules: Robin, Alex, Sam, Support with
// Allgemein and Eskalation, Marketing, Tracker installed with
// events:subscribe, messages:read, messages:write and [message.created],
// G-6), whose manifest delivers to a TLS receiver for hooks.example.com, so
// Tracker's install created the subscription the tests deliver to. Around
// it: app.Deliveries over its own store, the consumer webhooks of
// internal/sync, River (role api: the test calls Deliver; role worker:
// River runs the jobs) and the egress client with a fake resolver. Owners
// change subscriptions and installations through the real use cases.

// defaultOptions are the delivery options of the tests: backoff from one
// second to eight, a retry window of an hour (below the event retention of
// a day), every other limit out of the way unless a test lowers it.
func defaultOptions() app.DeliveryOptions {
	return app.DeliveryOptions{
		Retry:                     webhook.RetryConfig{Base: time.Second, Cap: 8 * time.Second, MaxAge: time.Hour},
		DeliveryTimeout:           10 * time.Second,
		LeaseRecordAllowance:      2 * time.Second,
		MaxConsecutiveFailures:    50,
		MaxPendingPerSubscription: 1000,
		SecretRotationOverlap:     24 * time.Hour,
		ChainMaxDeliveries:        100,
		ChainMaxDuration:          30 * time.Second,
		BatchMaxDeliveries:        16,
		BatchMaxDuration:          time.Second,
		RunMaxSubscriptions:       16,
		RunGatherPause:            3 * time.Millisecond,
		RoundInsertMaxDeliveries:  5000,
	}
}

// leaseLength is how long a claim of b's delivery path leases its batch
// (ADR 0088): one attempt, the time to record its answers and, when a
// batch may hold more than one head, the time in which it starts its
// sends.
func (b *bundle) leaseLength() time.Duration {
	d := b.opts.DeliveryTimeout + b.opts.LeaseRecordAllowance
	if b.opts.BatchMaxDeliveries > 1 {
		d += b.opts.BatchMaxDuration
	}
	return d
}

type options struct {
	// worker runs the jobs (role worker) instead of only inserting them
	// (role api, the test calls Deliver).
	worker bool
	// realClock uses the real clock, for tests whose jobs River must run
	// on time; otherwise a fake clock starts at the current time.
	realClock bool
	// clk, when set, is the delivery path's clock (for example a real
	// clock running behind the database's).
	clk clock.Clock
	// jobMaxAttempts sets the runs a failing delivery job gets (0: River's
	// default).
	jobMaxAttempts int
	// blockPrivate leaves the allow_private entry out of
	// egress.allowed_hosts.
	blockPrivate bool
	// change adjusts the delivery options.
	change func(*app.DeliveryOptions)
	// wrap wraps the delivery store, to inject failures.
	wrap func(app.DeliveryStore) app.DeliveryStore
	// random drives the backoff jitter; nil is math/rand/v2.
	random func(n int64) int64
	// tracer sees every statement of the delivery path (benchmarks).
	tracer pgx.QueryTracer
	// scheduler wraps the delivery scheduler (benchmarks).
	scheduler func(app.DeliveryScheduler) app.DeliveryScheduler
	// sender wraps the webhook sender, to inject a cancellation.
	sender func(app.WebhookSender) app.WebhookSender
	// roundElsewhere runs the consumer rounds as another worker process
	// would: through a delivery path of their own, so no run of b.d starts
	// from what a round of its process read (ADR 0104).
	roundElsewhere bool
	// state wraps the instance state the delivery path reads sync_epoch
	// from, to count its reads.
	state func(instance.State) instance.State
	// logs, when set, receives the log lines of the delivery path and the
	// egress client through the production handler of platform/otel
	// instead of the record capture of egresstest.
	logs *oteltest.Logs
	// configQueues gives the runtime the jobs.queue.<name>.max_workers of
	// the world's configuration (the defaults), as a worker process
	// started with them has, instead of the few workers of the tests.
	configQueues bool
}

type bundle struct {
	w         *webhookstest.World
	db        *pgtest.DB
	clock     clock.Clock // the delivery path's clock
	fake      *clock.Fake // the world's clock; also the delivery path's unless realClock
	appID     ids.ID
	sub       ids.ID // Tracker's subscription, created by its install
	runtime   *jobs.Runtime
	queues    map[string]jobs.QueueOptions // the runtime's workers per queue
	pool      *pgxpool.Pool                // the delivery path's pool
	jobMax    int                          // options.jobMaxAttempts
	uow       *pg.UnitOfWork
	scheduler app.DeliveryScheduler // the delivery path's
	sender    app.WebhookSender     // the delivery path's, over the egress client with the fake resolver
	d         *app.Deliveries
	round     *syncapp.Runner
	recv      *receiver
	resolver  *egresstest.Resolver
	egressLog *egresstest.Logs
	log       *egresstest.Logs
	metrics   *egresstest.Metrics
	// appMetrics holds the delivery path's own metrics.
	appMetrics *oteltest.Metrics
	spans      *oteltest.Spans
	master     []byte
	opts       app.DeliveryOptions
}

var bg = context.Background()

// trackerPath is the path and query of Tracker's events_url at the
// receiver; neither may appear in any log, span or row.
const trackerPath = "/hooks/bothy?token=secret-path"

func deliveryWorld(t testing.TB, o options) *bundle {
	t.Helper()
	db := pgtest.New(t)
	b := &bundle{db: db, fake: clock.NewFake(time.Now().UTC().Truncate(time.Microsecond)), opts: defaultOptions()}
	b.clock = b.fake
	if o.realClock {
		b.clock = clock.Real{}
	}
	if o.clk != nil {
		b.clock = o.clk
	}
	if o.change != nil {
		o.change(&b.opts)
	}
	b.recv = newReceiver(t)
	hosts, err := hostlist.Parse([]string{egresstest.DefaultHost, b.recv.hostPort(), fmt.Sprintf("%s:%d", otherHost, b.recv.srv.Port)})
	require.NoError(t, err)
	w := harness.BuildMatrixWorld(t, db, harness.WithClock(b.fake),
		harness.WithConfig(func(cfg *wire.Config) {
			cfg.Webhook.AllowedHosts = hosts
			// Owners act again after the clock moved past the event
			// retention (gap tests).
			cfg.Identity.SessionTTL, cfg.Identity.StepUpMaxAge = 365*24*time.Hour, 365*24*time.Hour
		}),
		harness.WithTrackerDelivery(domain.Delivery{Mode: domain.DeliveryWebhook, EventsURL: b.recv.url(trackerPath)}))
	b.w = &webhookstest.World{World: w}
	b.appID, b.sub = w.Tracker.ID, b.w.TrackerSubscription(t).ID
	s := w.Services

	// The delivery path runs on its own pool when a benchmark traces its
	// statements, and on the world's otherwise.
	pool, audit := db.App, auditing.Recorder(s.Audit)
	az := s.Authorizer
	if o.tracer != nil {
		pool = db.TracedApp(t, o.tracer, 0)
		audit = auditpg.New(pool, b.clock)
		var err error
		az, err = azapp.NewAuthorizer(azapp.Deps{Grants: azpg.NewGrants(pool), Memberships: chatpg.NewStore(pool),
			Recorder: audit, Clock: b.clock}, azapp.Options{StepUpMaxAge: s.Config.Identity.StepUpMaxAge})
		require.NoError(t, err)
	}
	uow := pg.NewUnitOfWork(pool, s.Config.Database.TxRetryMax, s.Config.Database.LockTimeout)

	b.resolver = egresstest.NewResolver(map[string][]netip.Addr{
		egresstest.DefaultHost: {netip.MustParseAddr("127.0.0.1")},
		otherHost:              {netip.MustParseAddr("127.0.0.1")},
	})
	var egressLogger *slog.Logger
	egressLogger, b.egressLog = egresstest.NewLogs()
	if o.logs != nil {
		egressLogger = o.logs.Logger()
	}
	b.metrics = egresstest.NewMetrics(t)
	b.appMetrics = oteltest.NewMetrics(t)
	b.spans = oteltest.NewSpans(t)
	var private hostlist.List
	if !o.blockPrivate {
		private, err = hostlist.Parse([]string{b.recv.hostPort() + ";allow_private", fmt.Sprintf("%s:%d;allow_private", otherHost, b.recv.srv.Port)})
		require.NoError(t, err)
	}
	client, err := egress.New(egress.Options{
		Purpose: "webhook", Hosts: egress.NewHostPolicy(hosts), Private: private, Schemes: []string{"https"},
		Redirects: egress.RedirectNever, Timeout: b.opts.DeliveryTimeout, MaxResponseBytes: 4096, RootCAs: b.recv.srv.RootCAs,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute,
	}, egress.Deps{Resolver: b.resolver, Meter: b.metrics.Provider(), Logger: egressLogger})
	require.NoError(t, err)

	provider, err := wire.NewSecretsProvider(s.Config)
	require.NoError(t, err)
	master := hmackey.New(provider, s.Config.Webhook.HMACMasterKeyRef)
	b.master = b.w.MasterKey(t)

	role := "api"
	if o.worker {
		role = "worker"
	}
	queues := testQueues
	if o.configQueues {
		queues = s.Config.Jobs.QueueOptions()
	}
	b.runtime = newRuntime(t, pool, role, queues)
	b.queues = queues

	var logger *slog.Logger
	logger, b.log = egresstest.NewLogs()
	if o.logs != nil {
		logger = o.logs.Logger()
	}
	var store app.DeliveryStore = appspg.NewDeliveryStore(pool)
	if o.wrap != nil {
		store = o.wrap(store)
	}
	var scheduler app.DeliveryScheduler = deliveryjobs.NewScheduler(b.runtime.Inserter())
	if o.scheduler != nil {
		scheduler = o.scheduler(scheduler)
	}
	var sender app.WebhookSender = webhookhttp.NewSender(client, b.spans.Provider)
	if o.sender != nil {
		sender = o.sender(sender)
	}
	var state instance.State = s.Instance
	if o.state != nil {
		state = o.state(state)
	}
	// As internal/wire builds it: the delivery job's transactions run under
	// generic plans (D-SQ-19).
	deps := app.DeliveryDeps{
		UnitOfWork: uow.GenericPlans(), Store: store, Events: syncpg.NewLog(pool), Authorizer: az, Router: az, Audit: audit,
		Keys: s.Keys, State: state, Master: master, Sender: sender, Scheduler: scheduler,
		Clock: b.clock, Random: o.random, Logger: logger, Meter: b.appMetrics.Provider,
	}
	b.d, err = app.NewDeliveries(deps, b.opts)
	require.NoError(t, err)
	rounds := b.d
	if o.roundElsewhere {
		rounds, err = app.NewDeliveries(deps, b.opts)
		require.NoError(t, err)
	}
	b.pool, b.jobMax, b.uow, b.scheduler, b.sender = pool, o.jobMaxAttempts, uow, scheduler, sender
	require.NoError(t, deliveryjobs.RegisterWebhookDeliver(b.runtime, b.d, o.jobMaxAttempts))
	if o.worker {
		startRuntime(t, b.runtime)
	}

	sessions, err := syncpg.NewSessions(pool, b.clock, syncpg.SessionOptions{PollInterval: time.Hour})
	require.NoError(t, err)
	b.round, err = syncapp.NewRunner(eventsync.ConsumerWebhooks, rounds, syncapp.Deps{
		UoW: uow, Events: syncpg.NewLog(pool), Cursors: syncpg.NewCursors(pool, b.clock), Coordinator: sessions,
	}, syncapp.Options{BatchSize: 100, PollInterval: time.Hour})
	require.NoError(t, err)
	// The events of building the world (channels, Tracker's installation)
	// come before Tracker's subscription could match any of them.
	b.drain(t)
	return b
}

// testQueues are the few workers per queue of a test's runtime.
var testQueues = map[string]jobs.QueueOptions{jobs.QueueDefault: {MaxWorkers: 2}, jobs.QueueDelivery: {MaxWorkers: 4}, jobs.QueueMaintenance: {MaxWorkers: 1}}

// newRuntime returns a River runtime in role on the delivery path's pool
// with the workers of queues.
func newRuntime(t testing.TB, pool *pgxpool.Pool, role string, queues map[string]jobs.QueueOptions) *jobs.Runtime {
	t.Helper()
	rt, err := jobs.New(jobs.Options{
		Role:              role,
		Queues:            queues,
		FetchPollInterval: 50 * time.Millisecond,
		FetchCooldown:     5 * time.Millisecond,
		JobTimeout:        time.Minute,
		ShutdownTimeout:   5 * time.Second,

		InProcessStartFallback: 30 * time.Second,
	}, jobs.Deps{Pool: pool, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return rt
}

// startRuntime starts rt and stops it when the test ends.
func startRuntime(t testing.TB, rt *jobs.Runtime) {
	t.Helper()
	ctx, cancel := context.WithCancel(bg)
	require.NoError(t, rt.Start(ctx))
	t.Cleanup(func() {
		stop, done := context.WithTimeout(bg, 10*time.Second)
		defer done()
		_ = rt.Stop(stop)
		cancel()
	})
}

// secondWorker starts a second runtime in role worker on the same
// database, as a second worker process would run: River hands each job to
// one of the two.
func (b *bundle) secondWorker(t testing.TB) *jobs.Runtime {
	t.Helper()
	rt := newRuntime(t, b.pool, "worker", b.queues)
	require.NoError(t, deliveryjobs.RegisterWebhookDeliver(rt, b.d, b.jobMax))
	startRuntime(t, rt)
	return rt
}

// schedule inserts a delivery job of sub due now through the delivery
// path's own scheduler (its runtime's registration of the kind).
func (b *bundle) schedule(t testing.TB, sub ids.ID) {
	t.Helper()
	require.NoError(t, b.uow.Do(bg, func(ctx context.Context) error { return b.scheduler.Schedule(ctx, sub, b.now()) }))
}

// logged reports whether the delivery path logged a line with msg.
func (b *bundle) logged(msg string) bool {
	for _, r := range b.log.Records() {
		if r.Message == msg {
			return true
		}
	}
	return false
}

// drain runs rounds until the consumer is at the head of the log.
func (b *bundle) drain(tb testing.TB) {
	tb.Helper()
	for b.runRound(tb) > 0 {
		continue
	}
}

// robin acts as Robin with the facts of now.
func (b *bundle) robin(t testing.TB) context.Context { return b.w.As(t, b.w.Robin.Token) }

// registerApp registers an app name as Robin (no webhook delivery, the
// world's scopes, manifest events) and installs it with the event
// subscriptions subs. It returns the installation.
func (b *bundle) registerApp(t testing.TB, name string, events, subs []string) apps.Installation {
	t.Helper()
	a, err := b.w.Services.Apps.RegisterApp(b.robin(t), app.RegisterApp{Manifest: domain.Manifest{
		Name: name, Scopes: harness.TrackerScopes, Events: events, Delivery: domain.Delivery{Mode: domain.DeliveryNone},
	}})
	require.NoError(t, err)
	installed, err := b.w.Services.Apps.InstallApp(b.robin(t), app.InstallApp{AppID: a.ID, EventSubscriptions: subs})
	require.NoError(t, err)
	return installed.Installation
}

func (b *bundle) now() time.Time { return clock.Stamp(b.clock) }

// advance moves the fake clock.
func (b *bundle) advance(t testing.TB, d time.Duration) {
	t.Helper()
	require.NotNil(t, b.fake, "the test needs the fake clock")
	b.fake.Advance(d)
}

// create creates a subscription of appID (Tracker's when zero) to the
// receiver with types (message.created when nil) as Robin does
// (createWebhookSubscription) and returns it with its one-time secret.
func (b *bundle) create(t testing.TB, appID ids.ID, types []string, hmac bool) apps.SubscriptionWithSecret {
	t.Helper()
	if appID.IsZero() {
		appID = b.appID
	}
	if types == nil {
		types = []string{"message.created"}
	}
	created, err := b.w.Services.Webhooks.CreateSubscription(b.robin(t),
		apps.CreateSubscription{AppID: appID, URL: b.recv.url(trackerPath), EventTypes: types, EnableHMAC: hmac})
	require.NoError(t, err)
	return created
}

// setState pauses, resumes or re-enables sub as Robin does
// (updateWebhookSubscription): a resume or re-enable resets the failures
// and makes the head due now with a job.
func (b *bundle) setState(t testing.TB, sub ids.ID, state apps.SubscriptionState) {
	t.Helper()
	_, err := b.w.Services.Webhooks.UpdateSubscription(b.robin(t), apps.UpdateSubscription{ID: sub, State: &state})
	require.NoError(t, err)
}

// disable switches sub off the way a system transition does, for a round
// that must meet a disabled subscription.
func (b *bundle) disable(t testing.TB, sub ids.ID) {
	t.Helper()
	_, err := b.db.App.Exec(bg, `UPDATE webhook_subscriptions SET state = 'disabled', disabled_at = $2 WHERE id = $1`, sub, b.now())
	require.NoError(t, err)
}

// withPending sets up a world whose Tracker subscription has one pending
// delivery of a message Alex posted in Eskalation with text.
func withPending(t testing.TB, o options, text string) (*bundle, ids.ID) {
	t.Helper()
	b := deliveryWorld(t, o)
	b.postAndRound(t, text)
	return b, b.sub
}

// post posts text in channel as p and returns the event's seq. It acts as
// the principal p's token authenticated as when the world was built, so it
// works after the fake clock moved past the session's lifetime.
func (b *bundle) post(t testing.TB, p harness.Person, channel ids.ID, text string) int64 {
	t.Helper()
	_, err := b.w.Services.Chat.PostMessage(actor.With(bg, p.Principal), chatapp.PostMessage{ChannelID: channel, Text: text})
	require.NoError(t, err)
	var seq int64
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT max(seq) FROM event_log WHERE type = 'message.created'`).Scan(&seq))
	return seq
}

// postAndRound posts text as Alex in Eskalation, the channel of the
// world's subscription, and runs one round of the consumer webhooks: the
// step most delivery tests take for each event.
func (b *bundle) postAndRound(t testing.TB, text string) {
	t.Helper()
	b.post(t, b.w.Alex, b.w.Eskalation, text)
	b.runRound(t)
}

// runRound runs one round of the consumer webhooks.
func (b *bundle) runRound(t testing.TB) int {
	t.Helper()
	n, err := b.round.RunRound(bg)
	require.NoError(t, err)
	return n
}

// deliver runs the delivery job of sub once, as River would.
func (b *bundle) deliver(t testing.TB, sub ids.ID) {
	t.Helper()
	require.NoError(t, b.d.Deliver(bg, sub))
}

// deliveryRow is a row of webhook_deliveries.
type deliveryRow struct {
	ID            ids.ID
	EventSeq      int64
	EventID       ids.ID
	EventAt       time.Time // event_occurred_at
	Status        string
	Attempt       int
	NextAttemptAt *time.Time
	LastError     *string
	ResponseCode  *int
	DeliveredAt   *time.Time
	CreatedAt     time.Time
}

// deliveries returns the rows of sub in event_seq order.
func (b *bundle) deliveries(t testing.TB, sub ids.ID) []deliveryRow {
	t.Helper()
	rows, err := b.db.App.Query(bg, `SELECT id, event_seq, event_id, event_occurred_at, status, attempt, next_attempt_at, last_error,
		response_code, delivered_at, created_at FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY event_seq`, sub)
	require.NoError(t, err)
	defer rows.Close()
	var out []deliveryRow
	for rows.Next() {
		var r deliveryRow
		require.NoError(t, rows.Scan(&r.ID, &r.EventSeq, &r.EventID, &r.EventAt, &r.Status, &r.Attempt, &r.NextAttemptAt, &r.LastError,
			&r.ResponseCode, &r.DeliveredAt, &r.CreatedAt))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// subscriptionRow is a row of webhook_subscriptions.
type subscriptionRow struct {
	State               string
	ConsecutiveFailures int
	LastDeliveredSeq    int64
	DisabledAt          *time.Time
	SigningKeyKID       string
}

func (b *bundle) subscription(t testing.TB, sub ids.ID) subscriptionRow {
	t.Helper()
	var r subscriptionRow
	require.NoError(t, b.db.App.QueryRow(bg, `SELECT state, consecutive_failures, last_delivered_seq, disabled_at, signing_key_kid
		FROM webhook_subscriptions WHERE id = $1`, sub).Scan(&r.State, &r.ConsecutiveFailures, &r.LastDeliveredSeq, &r.DisabledAt, &r.SigningKeyKID))
	return r
}

// transitions returns the audit entries of webhook_out.transition.
func (b *bundle) transitions(t testing.TB) []audittest.Row {
	t.Helper()
	return audittest.List(t, b.db.App, audittest.Filter{Action: "webhook_out.transition"})
}

// otherHost is a second allowed host served by the same receiver, the
// target of a redirect that must never be followed.
const otherHost = "other.example.com"

// received is one request the receiver got.
type received struct {
	// at is when the request arrived, by the wall clock.
	at                     time.Time
	host, path             string
	id, timestamp, sig, ua string
	contentType            string
	body                   []byte
}

// seq returns the event seq of the envelope r carried, and false for a
// body that is not one.
func (r received) seq() (int64, bool) {
	var env struct {
		Seq *int64 `json:"seq"`
	}
	if json.Unmarshal(r.body, &env) != nil || env.Seq == nil {
		return 0, false
	}
	return *env.Seq, true
}

// receiver is a TLS server for hooks.example.com and other.example.com on
// 127.0.0.1. It records every request and answers with respond (200 by
// default), which may block.
type receiver struct {
	srv     *egresstest.TLSServer
	mu      sync.Mutex
	got     []received
	respond func(n int, w http.ResponseWriter, r *http.Request)
	arrived chan struct{}
	// inFlight and peak count the requests being answered now and the
	// most at any one time.
	inFlight, peak int
}

func newReceiver(t testing.TB) *receiver {
	t.Helper()
	rv := &receiver{arrived: make(chan struct{}, 1024)}
	rv.srv = egresstest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rv.mu.Lock()
		n := len(rv.got)
		rv.inFlight++
		rv.peak = max(rv.peak, rv.inFlight)
		defer func() {
			rv.mu.Lock()
			rv.inFlight--
			rv.mu.Unlock()
		}()
		rv.got = append(rv.got, received{at: time.Now(), host: r.Host, path: r.URL.Path, id: r.Header.Get("webhook-id"), timestamp: r.Header.Get("webhook-timestamp"),
			sig: r.Header.Get("webhook-signature"), ua: r.Header.Get("User-Agent"), contentType: r.Header.Get("Content-Type"), body: body})
		respond := rv.respond
		rv.mu.Unlock()
		select {
		case rv.arrived <- struct{}{}:
		default: // wait polls requests() too, so a full channel loses nothing
		}
		if respond != nil {
			respond(n, w, r)
			return
		}
		w.WriteHeader(http.StatusOK)
	}), egresstest.DefaultHost, otherHost)
	return rv
}

// answer sets how the receiver answers the n-th request (from 0).
func (rv *receiver) answer(respond func(n int, w http.ResponseWriter, r *http.Request)) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.respond = respond
}

// failRequest answers the k-th request (from 0) with 500 and every other
// with okCode.
func (rv *receiver) failRequest(k, okCode int) {
	rv.answer(func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == k {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(okCode)
	})
}

// status answers every request with code.
func (rv *receiver) status(code int) {
	rv.answer(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) })
}

func (rv *receiver) hostPort() string {
	return fmt.Sprintf("%s:%d", egresstest.DefaultHost, rv.srv.Port)
}

func (rv *receiver) url(pathAndQuery string) string {
	return "https://" + rv.hostPort() + pathAndQuery
}

// peakInFlight returns the most requests the receiver held at once.
func (rv *receiver) peakInFlight() int {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.peak
}

// requests returns what arrived so far.
func (rv *receiver) requests() []received {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([]received(nil), rv.got...)
}

// idsByPath returns the webhook-id of every request that arrived so far,
// in the order they arrived, by the path they were sent to (one path per
// subscription of a test).
func (rv *receiver) idsByPath() map[string][]string {
	out := map[string][]string{}
	for _, r := range rv.requests() {
		out[r.path] = append(out[r.path], r.id)
	}
	return out
}

// wait blocks until n requests arrived in total, failing the test after a
// generous deadline.
func (rv *receiver) wait(t testing.TB, n int) []received {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for len(rv.requests()) < n {
		select {
		case <-rv.arrived:
		case <-deadline:
			t.Fatalf("the receiver got %d requests, want %d", len(rv.requests()), n)
		}
	}
	return rv.requests()
}

// eventually polls cond every few milliseconds until it holds, failing the
// test after a generous deadline. It never asserts on elapsed time.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
