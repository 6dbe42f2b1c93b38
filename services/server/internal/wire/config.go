package wire

import (
	"fmt"
	"sync"

	"bothy/server/internal/platform/config"
)

// ConfigEnv is the environment variable with the path of the configuration
// file, the default of every command's --config flag.
const ConfigEnv = "BOTHY_CONFIG"

// configIgnoredEnv are BOTHY_ variables that are not configuration keys, so
// loading does not reject them as unknown: the file path and the variables
// of the development scripts (tools/pg).
var configIgnoredEnv = []string{ConfigEnv, "BOTHY_CACHE_DIR", "BOTHY_PG_BIN", "BOTHY_PG_USER"}

// configKeyGroups lists the key groups of every area; a new area adds its
// configkeys_<area>.go function here.
var configKeyGroups = []func() []config.Key{
	platformConfigKeys,
	httpConfigKeys,
	databaseConfigKeys,
	jobsConfigKeys,
	syncConfigKeys,
	identityConfigKeys,
	authzConfigKeys,
	instanceConfigKeys,
	egressConfigKeys,
	appsConfigKeys,
	webhookConfigKeys,
	chatConfigKeys,
	retentionConfigKeys,
}

// Config is the loaded configuration: one typed struct per area, filled
// from the registry by the `config` tags, plus the raw values for anything a
// struct does not cover. Area structs are what wire hands to the Options of
// platform packages and adapters.
type Config struct {
	// Log holds log.*.
	Log LogConfig
	// OTel holds otel.*.
	OTel OTelConfig
	// Metrics holds metrics.*.
	Metrics MetricsConfig
	// Process holds process.*.
	Process ProcessConfig
	// Secrets holds secrets.*.
	Secrets SecretsConfig
	// HTTP holds http.*.
	HTTP HTTPConfig
	// RateLimit holds ratelimit.*.
	RateLimit RateLimitConfig
	// Database holds database.*.
	Database DatabaseConfig
	// Jobs holds jobs.*.
	Jobs JobsConfig
	// Sync holds sync.*.
	Sync SyncConfig
	// Consumer holds consumer.*.
	Consumer ConsumerConfig
	// Identity holds identity.*.
	Identity IdentityConfig
	// Authz holds authz.*.
	Authz AuthzConfig
	// Agent holds agent.*.
	Agent AgentConfig
	// Instance holds instance.*.
	Instance InstanceConfig
	// Egress holds egress.*.
	Egress EgressConfig
	// Webhook holds webhook.*, including webhook.allowed_hosts.
	Webhook WebhookConfig
	// Chat holds chat.*.
	Chat ChatConfig
	// Retention holds retention.*.
	Retention RetentionConfig

	// Values are the validated values behind the structs.
	Values *config.Values
}

var registry = sync.OnceValues(func() (*config.Registry, error) {
	groups := make([][]config.Key, len(configKeyGroups))
	for i, g := range configKeyGroups {
		groups[i] = g()
	}
	r, err := config.NewRegistry(config.RegistryOptions{IgnoreEnv: configIgnoredEnv}, groups...)
	if err != nil {
		return nil, err
	}
	if err := r.ValidateChecks(configChecks()); err != nil {
		return nil, err
	}
	return r, nil
})

// ConfigRegistry returns the registry of every key. The error (a
// *config.Error) means a key or check definition is wrong, a programming
// error that the tests of this package catch.
func ConfigRegistry() (*config.Registry, error) { return registry() }

// ConfigChecks returns the cross checks that Load runs.
func ConfigChecks() []config.Check { return configChecks() }

// Load reads the configuration every command uses: the defaults, the YAML
// file at path (none when path is empty) and the BOTHY_ variables of
// environ (os.Environ()), then validates every key, runs the cross checks
// and fills Config. Errors are *config.Error values naming keys and rules,
// never values, except for an unreadable file (wrapping the os error).
func Load(path string, environ []string) (*Config, error) {
	r, err := ConfigRegistry()
	if err != nil {
		return nil, err
	}
	v, err := r.LoadFile(path, environ)
	if err != nil {
		return nil, err
	}
	if err := v.Check(configChecks()); err != nil {
		return nil, err
	}
	cfg := &Config{Values: v}
	if err := v.Bind(cfg); err != nil {
		return nil, fmt.Errorf("wire: binding the configuration: %w", err)
	}
	return cfg, nil
}

// ConfigReference returns the markdown of docs/operations/configuration.md
// section 4: the key table and the cross checks.
func ConfigReference() (string, error) {
	r, err := ConfigRegistry()
	if err != nil {
		return "", err
	}
	return r.Reference(configChecks()), nil
}

// ConfigSchema returns the JSON Schema of the configuration file.
func ConfigSchema() ([]byte, error) {
	r, err := ConfigRegistry()
	if err != nil {
		return nil, err
	}
	return r.Schema()
}
