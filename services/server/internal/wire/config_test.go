package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/config"
	"bothy/server/internal/platform/jobs"
	"bothy/server/internal/platform/secrets/stack"
)

// configurationDoc is docs/operations/configuration.md, seen from here.
const configurationDoc = "../../../../docs/operations/configuration.md"

func registryForTest(t *testing.T) *config.Registry {
	t.Helper()
	r, err := ConfigRegistry()
	require.NoError(t, err)
	return r
}

func TestConfigKeysAreDocumented(t *testing.T) {
	t.Parallel()
	chapters := []string{chapter02, chapter03, chapter04, chapter06, chapter11, chapter19, chapter20}
	r := registryForTest(t)
	require.NotEmpty(t, r.Keys())
	for _, k := range r.Keys() {
		require.NotEmpty(t, k.Doc, k.Name)
		require.True(t, strings.HasSuffix(k.Doc, "."), "%s: doc is one sentence", k.Name)
		require.Contains(t, chapters, k.Chapter, k.Name)
		// The default passes the key's own validation: set it explicitly and load.
		if k.Default != "" {
			_, err := r.Load(nil, []string{config.EnvName(k.Name) + "=" + k.Default})
			require.NoError(t, err, k.Name)
		}
	}
}

func TestConfigEnvNamesAreUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, e := range configIgnoredEnv {
		seen[e] = "(ignored)"
	}
	for _, k := range registryForTest(t).Keys() {
		env := config.EnvName(k.Name)
		other, dup := seen[env]
		require.False(t, dup, "%s and %s map to %s", k.Name, other, env)
		seen[env] = k.Name
	}
}

func TestConfigRegistersTheKeysOfTheBrief(t *testing.T) {
	t.Parallel()
	r := registryForTest(t)
	for _, name := range []string{
		"database.url", "database.password_ref", "database.migration_url", "database.migration_password_ref",
		"database.max_conns", "database.tx_retry_max", "database.lock_timeout", "database.statement_timeout",
		"http.listen_address", "http.operator_listen_address", "http.read_header_timeout", "http.max_body_bytes", "http.shutdown_timeout",
		"log.level", "otel.traces_exporter", "otel.otlp_endpoint", "secrets.dir", "secrets.cache_ttl",
		"jobs.queue.default.max_workers", "jobs.queue.delivery.max_workers", "jobs.queue.maintenance.max_workers",
		"jobs.shutdown_timeout", "jobs.fetch_poll_interval", "jobs.fetch_cooldown",
		"sync.event_retention", "sync.partition_interval", "consumer.batch_size", "consumer.poll_interval",
		"identity.session_ttl", "identity.step_up_max_age", "identity.password_min_length",
		"agent.jwks_max_age", "instance.signing_key_max_age", "instance.signing_keys_master_key_ref",
		"egress.allowed_hosts", "egress.timeout", "egress.max_response_bytes", "egress.extra_ca_file",
		"webhook.allowed_hosts", "webhook.delivery_timeout", "webhook.max_consecutive_failures",
		"webhook.retry_backoff_base", "webhook.retry_backoff_cap", "webhook.max_pending_per_subscription",
		"webhook.retry_max_age", "webhook.secret_rotation_overlap", "webhook.hmac_master_key_ref",
		"webhook.chain_max_deliveries", "webhook.chain_max_duration", "webhook.batch_max_deliveries", "webhook.batch_max_duration", "webhook.job_max_attempts", "webhook.page_size_default", "webhook.page_size_max",
		"chat.message_max_bytes", "chat.name_max_chars", "chat.page_size_default", "chat.page_size_max",
		"retention.webhook_deliveries",
		"ratelimit.public_auth.per_minute", "ratelimit.public_auth.burst",
	} {
		_, ok := r.Lookup(name)
		require.True(t, ok, name)
	}
	_, ok := r.Lookup("webhook.receiver_tolerance")
	require.False(t, ok, "a receiver value has no server key (D-W-23)")
}

// TestWebhookConfigKeysFollowDM2616 pins kind, chapter and lower bound
// of the keys that D-M2-26-16 fixes.
func TestWebhookConfigKeysFollowDM2616(t *testing.T) {
	t.Parallel()
	type want struct {
		kind         config.Kind
		chapter, min string
		exclusive    bool
	}
	for name, w := range map[string]want{
		"webhook.max_consecutive_failures":     {config.KindInt, chapter03, "1", false},
		"webhook.retry_backoff_base":           {config.KindDuration, chapter03, "0s", true},
		"webhook.retry_backoff_cap":            {config.KindDuration, chapter03, "0s", true},
		"webhook.max_pending_per_subscription": {config.KindInt, chapter11, "1", false},
		"webhook.retry_max_age":                {config.KindDuration, chapter11, "0s", true},
		"webhook.secret_rotation_overlap":      {config.KindDuration, chapter11, "0s", true},
		"webhook.hmac_master_key_ref":          {config.KindSecretRef, chapter11, "", false},
	} {
		k, ok := registryForTest(t).Lookup(name)
		require.True(t, ok, name)
		require.Equal(t, w.kind, k.Kind, name)
		require.Equal(t, w.chapter, k.Chapter, name)
		require.Equal(t, w.min, k.Min, name)
		require.Equal(t, w.exclusive, k.MinExclusive, name)
	}
	k, _ := registryForTest(t).Lookup("webhook.hmac_master_key_ref")
	require.Equal(t, "file:<secrets.dir>/webhook_hmac_master_key", k.Default)
	k, _ = registryForTest(t).Lookup("webhook.allowed_hosts")
	require.Equal(t, config.KindHostList, k.Kind)

	var inApps, inWebhook []string
	for _, k := range appsConfigKeys() {
		inApps = append(inApps, k.Name)
	}
	for _, k := range webhookConfigKeys() {
		inWebhook = append(inWebhook, k.Name)
	}
	require.Equal(t, []string{"webhook.allowed_hosts"}, inApps)
	require.NotContains(t, inWebhook, "webhook.allowed_hosts", "registered once, in configkeys_apps.go")
}

func TestConfigStructCoversEveryKeyOnce(t *testing.T) {
	t.Parallel()
	bound, err := config.BoundKeys(&Config{})
	require.NoError(t, err)
	var names []string
	for _, k := range registryForTest(t).Keys() {
		names = append(names, k.Name)
	}
	slices.Sort(bound)
	require.Equal(t, names, bound)
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load("", nil)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", cfg.HTTP.ListenAddress)
	require.Equal(t, "127.0.0.1:9090", cfg.HTTP.OperatorListenAddress)
	require.Equal(t, "none", cfg.OTel.TracesExporter)
	require.Equal(t, "file:/var/lib/bothy/secrets/webhook_hmac_master_key", cfg.Webhook.HMACMasterKeyRef)
	require.Equal(t, "file:/var/lib/bothy/secrets/database_app_password", cfg.Database.PasswordRef)
	require.Empty(t, cfg.Webhook.AllowedHosts, "no webhook target is allowed until the operator lists one")
	require.Empty(t, cfg.Egress.ExtraCAFile)
	require.Less(t, cfg.Webhook.RetryMaxAge, cfg.Sync.EventRetention)
	require.LessOrEqual(t, cfg.Webhook.RetryBackoffBase, cfg.Webhook.RetryBackoffCap)
	require.Equal(t, cfg.Jobs.Queues.DeliveryMaxWorkers, cfg.Values.Int("jobs.queue.delivery.max_workers"))
}

// TestJobsQueueOptionsNameEveryQueueWithItsKey: the runtime's workers per
// queue come from jobs.queue.<name>.max_workers, one entry per queue.
func TestJobsQueueOptionsNameEveryQueueWithItsKey(t *testing.T) {
	t.Parallel()
	cfg, err := Load("", []string{"BOTHY_JOBS_QUEUE_DEFAULT_MAX_WORKERS=3", "BOTHY_JOBS_QUEUE_MAINTENANCE_MAX_WORKERS=4"})
	require.NoError(t, err)
	q := cfg.Jobs.QueueOptions()
	require.ElementsMatch(t, jobs.Queues(), slices.Collect(maps.Keys(q)))
	require.Equal(t, 3, q[jobs.QueueDefault].MaxWorkers)
	require.Equal(t, 200, q[jobs.QueueDelivery].MaxWorkers, "a worker serves 200 busy subscriptions at once by default (D-RT-13)")
	require.Equal(t, 4, q[jobs.QueueMaintenance].MaxWorkers)
}

func TestLoadFileAndEnvironment(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bothy.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
secrets:
  dir: /srv/bothy/secrets
webhook:
  allowed_hosts:
    - hooks.example.com
    - receiver.example.com:8443
  retry_backoff_base: 2s
jobs:
  queue:
    delivery:
      max_workers: 4
`), 0o600))
	cfg, err := Load(path, []string{
		"BOTHY_WEBHOOK_RETRY_BACKOFF_BASE=3s",
		"BOTHY_CONFIG=" + path,
		"BOTHY_PG_USER=nobody",
		"HOME=/root",
	})
	require.NoError(t, err)
	require.Equal(t, 3*time.Second, cfg.Webhook.RetryBackoffBase, "the environment wins over the file")
	require.Equal(t, 4, cfg.Jobs.Queues.DeliveryMaxWorkers)
	require.Equal(t, hostlist.List{{Host: "hooks.example.com", Port: 443}, {Host: "receiver.example.com", Port: 8443}}, cfg.Webhook.AllowedHosts)
	require.Equal(t, "file:/srv/bothy/secrets/webhook_hmac_master_key", cfg.Webhook.HMACMasterKeyRef)
	require.Equal(t, "file:/srv/bothy/secrets/signing_keys_master_key", cfg.Instance.SigningKeysMasterKeyRef)
}

func TestLoadRejectsUnknownKeysAndVariables(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bothy.yaml")
	require.NoError(t, os.WriteFile(path, []byte("webhook:\n  retry_backof_base: 2s\n"), 0o600))
	_, err := Load(path, []string{"BOTHY_WEBHOOK_MAX_RETRIES=9"})
	var ce *config.Error
	require.True(t, errors.As(err, &ce))
	require.Len(t, ce.Problems, 2)
	require.Contains(t, err.Error(), "BOTHY_WEBHOOK_MAX_RETRIES")
	require.Contains(t, err.Error(), "webhook.retry_backof_base")
}

func TestLoadNeverPrintsTheDatabaseURL(t *testing.T) {
	t.Parallel()
	_, err := Load("", []string{"BOTHY_DATABASE_URL=mysql://bothy:s3cr3t-EXAMPLE@db.example.com/bothy"})
	require.ErrorContains(t, err, "database.url")
	require.NotContains(t, err.Error(), "s3cr3t")
}

// TestLoadTakesDatabaseURLsThroughAUnixSocket: both database URLs may name
// the socket's directory as the query parameter host, libpq's form for a
// Unix socket; a URL with no host anywhere is still refused.
func TestLoadTakesDatabaseURLsThroughAUnixSocket(t *testing.T) {
	t.Parallel()
	cfg, err := Load("", []string{
		"BOTHY_DATABASE_URL=postgres:///bothy?host=/run/postgresql",
		"BOTHY_DATABASE_MIGRATION_URL=postgresql://bothy_owner@/bothy?host=/run/postgresql",
	})
	require.NoError(t, err)
	require.Equal(t, "postgres:///bothy?host=/run/postgresql", cfg.Database.URL)
	require.Equal(t, "postgresql://bothy_owner@/bothy?host=/run/postgresql", cfg.Database.MigrationURL)
	require.ErrorContains(t, loadWith(t, "BOTHY_DATABASE_URL=postgres:///bothy"), "query parameter host")
}

// loadWith loads the real registry with the variables env.
func loadWith(t *testing.T, env ...string) error {
	t.Helper()
	_, err := Load("", env)
	return err
}

func requireCheckFailure(t *testing.T, err error, check string, keys []string, values ...string) {
	t.Helper()
	var ce *config.Error
	require.True(t, errors.As(err, &ce), "want *config.Error, got %v", err)
	require.Len(t, ce.Problems, 1)
	require.Equal(t, check, ce.Problems[0].Check)
	for _, k := range keys {
		require.Contains(t, err.Error(), k)
	}
	for _, v := range values {
		require.NotContains(t, err.Error(), v, "a check message never shows a value")
	}
}

// orderCase is one row of a check between two ordered keys.
type orderCase struct {
	name, lower, upper string
	ok                 bool
}

// runOrderCases sets the two keys of a check through their variables and
// expects it to hold or to fail naming both keys and neither value.
func runOrderCases(t *testing.T, check, lowerKey, upperKey string, cases []orderCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := loadWith(t, config.EnvName(lowerKey)+"="+tc.lower, config.EnvName(upperKey)+"="+tc.upper)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			requireCheckFailure(t, err, check, []string{lowerKey, upperKey}, tc.lower, tc.upper)
		})
	}
}

func TestConfigCheckWebhookBackoffOrder(t *testing.T) {
	t.Parallel()
	runOrderCases(t, "webhook_backoff_order", "webhook.retry_backoff_base", "webhook.retry_backoff_cap", []orderCase{
		{"a base below the cap passes", "13s", "17s", true},
		// webhook_backoff_order (D-M2-26-16): base at most cap, so equal
		// values (a constant delay) pass.
		{"a base equal to the cap passes", "17s", "17s", true},
		{"a base above the cap fails", "17s", "13s", false},
	})
}

func TestConfigCheckWebhookRetryWithinRetention(t *testing.T) {
	t.Parallel()
	runOrderCases(t, "webhook_retry_within_retention", "webhook.retry_max_age", "sync.event_retention", []orderCase{
		{"a retry age below the retention passes", "13d", "17d", true},
		{"a retry age equal to the retention fails", "17d", "17d", false},
		{"a retry age above the retention fails", "19d", "17d", false},
	})
}

// TestConfigChecksFailNamingTheirKeys breaks every other check once.
func TestConfigChecksFailNamingTheirKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		check string
		env   []string
	}{
		{"webhook_attempt_within_retry_age", []string{"BOTHY_WEBHOOK_DELIVERY_TIMEOUT=2m", "BOTHY_WEBHOOK_RETRY_MAX_AGE=2m"}},
		{"jobs_fetch_order", []string{"BOTHY_JOBS_FETCH_COOLDOWN=3s", "BOTHY_JOBS_FETCH_POLL_INTERVAL=2s"}},
		{"sync_partition_within_retention", []string{"BOTHY_SYNC_PARTITION_INTERVAL=31d", "BOTHY_SYNC_EVENT_RETENTION=20d", "BOTHY_WEBHOOK_RETRY_MAX_AGE=1d"}},
		{"signing_key_publication_window", []string{"BOTHY_AGENT_JWKS_MAX_AGE=2d", "BOTHY_INSTANCE_SIGNING_KEY_MAX_AGE=2d"}},
		{"key_cache_within_publication", []string{"BOTHY_INSTANCE_KEY_CACHE_TTL=30m", "BOTHY_AGENT_JWKS_MAX_AGE=30m"}},
		{"step_up_within_session", []string{"BOTHY_IDENTITY_STEP_UP_MAX_AGE=20h", "BOTHY_IDENTITY_SESSION_TTL=10h"}},
		{"chat_message_within_body", []string{"BOTHY_CHAT_MESSAGE_MAX_BYTES=64KiB", "BOTHY_HTTP_MAX_BODY_BYTES=64KiB"}},
		{"chat_page_size_order", []string{"BOTHY_CHAT_PAGE_SIZE_DEFAULT=300", "BOTHY_CHAT_PAGE_SIZE_MAX=200"}},
		{"database_lock_within_statement", []string{"BOTHY_DATABASE_LOCK_TIMEOUT=9s", "BOTHY_DATABASE_STATEMENT_TIMEOUT=8s"}},
		{"http_listeners_distinct", []string{"BOTHY_HTTP_OPERATOR_LISTEN_ADDRESS=127.0.0.1:8080"}},
		{"webhook_hosts_without_private", []string{"BOTHY_WEBHOOK_ALLOWED_HOSTS=hooks.example.com;allow_private"}},
		{"webhook_chain_within_job_timeout", []string{"BOTHY_WEBHOOK_CHAIN_MAX_DURATION=4m", "BOTHY_WEBHOOK_DELIVERY_TIMEOUT=1m", "BOTHY_JOBS_JOB_TIMEOUT=5m"}},
		{"database_startup_backoff_order", []string{"BOTHY_DATABASE_STARTUP_BACKOFF_INITIAL=20s", "BOTHY_DATABASE_STARTUP_BACKOFF_MAX=10s"}},
	} {
		t.Run(tc.check, func(t *testing.T) {
			t.Parallel()
			var c config.Check
			for _, x := range configChecks() {
				if x.Name == tc.check {
					c = x
				}
			}
			require.Equal(t, tc.check, c.Name)
			var values []string
			for _, e := range tc.env {
				values = append(values, e[strings.IndexByte(e, '=')+1:])
			}
			requireCheckFailure(t, loadWith(t, tc.env...), tc.check, c.Keys, values...)
		})
	}
	// Every check appears above or in its own test.
	require.Len(t, configChecks(), 15)
	_, err := Load("", []string{"BOTHY_DATABASE_STATEMENT_TIMEOUT=0s", "BOTHY_DATABASE_LOCK_TIMEOUT=9m"})
	require.NoError(t, err, "a statement timeout of 0s leaves the lock timeout free")
}

func TestConfigSchemaBuilds(t *testing.T) {
	t.Parallel()
	raw, err := ConfigSchema()
	require.NoError(t, err)

	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("config.schema.json", doc))
	schema, err := c.Compile("config.schema.json") // checks it against the 2020-12 meta-schema
	require.NoError(t, err)

	var tree map[string]any
	require.NoError(t, json.Unmarshal(raw, &tree))
	for _, k := range registryForTest(t).Keys() {
		leaf := tree
		for _, part := range strings.Split(k.Name, ".") {
			props, ok := leaf["properties"].(map[string]any)
			require.True(t, ok, k.Name)
			leaf, ok = props[part].(map[string]any)
			require.True(t, ok, "%s is in the schema", k.Name)
		}
		require.NotNil(t, leaf["type"], k.Name)
		require.Equal(t, string(k.Kind), leaf["x-bothy-kind"], k.Name)
		require.Equal(t, config.EnvName(k.Name), leaf["x-bothy-env"], k.Name)
		if k.Min != "" {
			require.Equal(t, k.Min, leaf["x-bothy-min"], k.Name)
		}
		if k.Max != "" {
			require.Equal(t, k.Max, leaf["x-bothy-max"], k.Name)
		}
		if k.Kind == config.KindInt && k.Min != "" {
			require.NotNil(t, leaf["minimum"], k.Name)
		}
	}

	inst := func(s string) any {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		require.NoError(t, err)
		return v
	}
	require.NoError(t, schema.Validate(inst(`{"webhook": {"allowed_hosts": ["hooks.example.com"], "retry_backoff_base": "5s",
		"max_consecutive_failures": 3, "hmac_master_key_ref": "file:/run/secrets/webhook_hmac_master_key"},
		"jobs": {"queue": {"delivery": {"max_workers": 4}}}, "http": {"max_body_bytes": "2MiB"}}`)))
	require.Error(t, schema.Validate(inst(`{"webhook": {"max_consecutive_failures": 0}}`)))
	require.Error(t, schema.Validate(inst(`{"webhook": {"retry_backof_base": "5s"}}`)))
}

func TestSecretsCatalogueKeysAreRegistered(t *testing.T) {
	t.Parallel()
	r := registryForTest(t)
	for _, e := range stack.Catalogue() {
		k, ok := r.Lookup(e.ConfigKey)
		require.True(t, ok, e.ConfigKey)
		require.Equal(t, config.KindSecretRef, k.Kind, e.ConfigKey)
		require.Equal(t, "file:<secrets.dir>/"+e.Name, k.Default, e.ConfigKey)
	}
}

// TestConfigReferenceUpToDate fails when docs/operations/configuration.md
// section 4 differs from the registry; `make config-reference` fixes it.
func TestConfigReferenceUpToDate(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(configurationDoc)
	require.NoError(t, err)
	md, err := ConfigReference()
	require.NoError(t, err)
	want, err := config.ReplaceGenerated(doc, md)
	require.NoError(t, err)
	require.Equal(t, string(want), string(doc), "run make config-reference")
}
