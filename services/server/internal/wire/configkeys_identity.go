package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

// identityConfigKeys are the keys of sessions, step-up and passwords.
func identityConfigKeys() []config.Key {
	return []config.Key{
		{Name: "identity.session_ttl", Kind: config.KindDuration, Default: "14d", Min: "5m", Max: "365d", Chapter: chapter19,
			Doc: "Lifetime of a session bearer token after sign-in."},
		{Name: "identity.step_up_max_age", Kind: config.KindDuration, Default: "10m", Min: "1m", Max: "24h", Chapter: chapter19,
			Doc: "How long a step-up counts for the actions that require one."},
		{Name: "identity.token_cache_ttl", Kind: config.KindDuration, Default: "1m", Min: "0s", Max: "1h", Chapter: chapter19,
			Doc: "How long a process that serves the API may answer the owner of a bearer token from memory instead of the database (ADR 0102); a revocation, step-up or change of the person reaches every such process through PostgreSQL at its commit, so this only bounds what a missed change could keep alive. 0 looks every token up."},
		{Name: "identity.token_cache_entries", Kind: config.KindInt, Default: "10000", Min: "0", Max: "10000000", Unit: "tokens", Chapter: chapter19,
			Doc: "Most token owners a process keeps in memory (about 200 bytes each); a full cache is emptied and refills with the tokens in use. 0 looks every token up."},
		{Name: "identity.password_min_length", Kind: config.KindInt, Default: "12", Min: "8", Max: "128", Unit: "characters", Chapter: chapter19,
			Doc: "Fewest characters of a new password."},
		{Name: "identity.password_hash_memory", Kind: config.KindByteSize, Default: "19MiB", Min: "8MiB", Max: "1GiB", Chapter: chapter19,
			Doc: "Memory of one argon2id password hash (m); stored in each hash, so a change applies to new hashes and to the next sign-in of each person."},
		{Name: "identity.password_hash_iterations", Kind: config.KindInt, Default: "2", Min: "1", Max: "16", Unit: "passes", Chapter: chapter19,
			Doc: "Passes of one argon2id password hash over its memory (t)."},
		{Name: "identity.password_hash_parallelism", Kind: config.KindInt, Default: "1", Min: "1", Max: "16", Unit: "lanes", Chapter: chapter19,
			Doc: "Lanes of one argon2id password hash (p); each sign-in uses this many threads."},
	}
}

// IdentityConfig holds the session and password settings.
type IdentityConfig struct {
	// SessionTTL is identity.session_ttl.
	SessionTTL time.Duration `config:"identity.session_ttl"`
	// StepUpMaxAge is identity.step_up_max_age.
	StepUpMaxAge time.Duration `config:"identity.step_up_max_age"`
	// TokenCacheTTL is identity.token_cache_ttl.
	TokenCacheTTL time.Duration `config:"identity.token_cache_ttl"`
	// TokenCacheEntries is identity.token_cache_entries.
	TokenCacheEntries int `config:"identity.token_cache_entries"`
	// PasswordMinLength is identity.password_min_length.
	PasswordMinLength int `config:"identity.password_min_length"`
	// PasswordHashMemory is identity.password_hash_memory in bytes.
	PasswordHashMemory int64 `config:"identity.password_hash_memory"`
	// PasswordHashIterations is identity.password_hash_iterations.
	PasswordHashIterations int `config:"identity.password_hash_iterations"`
	// PasswordHashParallelism is identity.password_hash_parallelism.
	PasswordHashParallelism int `config:"identity.password_hash_parallelism"`
}
