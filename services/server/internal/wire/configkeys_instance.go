package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

// instanceConfigKeys are the keys of the server signing keys and their
// publication.
func instanceConfigKeys() []config.Key {
	return []config.Key{
		{Name: "agent.jwks_max_age", Kind: config.KindDuration, Default: "1h", Min: "1m", Max: "7d", Chapter: chapter11,
			Doc: "Cache-Control max-age of the key endpoints (getJwks, getWebhookKeys) and how long a next key is published before it signs."},
		{Name: "instance.signing_key_max_age", Kind: config.KindDuration, Default: "90d", Min: "1d", Max: "730d", Chapter: chapter19,
			Doc: "Rotation period: age at which the active server signing key of a purpose is replaced by the next one."},
		{Name: "instance.signing_keys_master_key_ref", Kind: config.KindSecretRef, Default: "file:<secrets.dir>/signing_keys_master_key", Chapter: chapter19,
			Doc: "Reference to the master key that encrypts the private server signing keys at rest."},
		{Name: "instance.key_cache_ttl", Kind: config.KindDuration, Default: "5m", Min: "1s", Max: "1h", Chapter: chapter19,
			Doc: "How long a process reuses the decrypted signing keys before reading them again; a rotation by another process is used at most this late."},
		{Name: "instance.name", Kind: config.KindString, Default: "bothy", Chapter: chapter02,
			Doc: "Display name the instance gets when its row is created at the first start (1 to 200 characters)."},
	}
}

// AgentConfig holds the settings of the agent-facing key endpoints.
type AgentConfig struct {
	// JWKSMaxAge is agent.jwks_max_age.
	JWKSMaxAge time.Duration `config:"agent.jwks_max_age"`
}

// InstanceConfig holds the signing key settings.
type InstanceConfig struct {
	// SigningKeyMaxAge is instance.signing_key_max_age.
	SigningKeyMaxAge time.Duration `config:"instance.signing_key_max_age"`
	// SigningKeysMasterKeyRef is instance.signing_keys_master_key_ref.
	SigningKeysMasterKeyRef string `config:"instance.signing_keys_master_key_ref"`
	// KeyCacheTTL is instance.key_cache_ttl.
	KeyCacheTTL time.Duration `config:"instance.key_cache_ttl"`
	// Name is instance.name.
	Name string `config:"instance.name"`
}
