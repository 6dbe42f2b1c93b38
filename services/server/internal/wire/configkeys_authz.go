package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

// authzConfigKeys are the keys of the authorization module.
func authzConfigKeys() []config.Key {
	return []config.Key{
		{Name: "authz.standing_cache_ttl", Kind: config.KindDuration, Default: "1m", Min: "0s", Max: "1h", Chapter: chapter19,
			Doc: "How long a process that serves the API may decide for a person with the grants and space memberships it keeps in memory instead of reading them (ADR 0103); every change of a grant or membership reaches every such process through PostgreSQL at its commit, so this only bounds what a missed change could keep alive. An app's standing is always read. 0 reads every standing."},
		{Name: "authz.standing_cache_entries", Kind: config.KindInt, Default: "10000", Min: "0", Max: "10000000", Unit: "persons", Chapter: chapter19,
			Doc: "Most persons whose standing a process keeps in memory (a few hundred bytes each, more for a person in many spaces); a full cache is emptied and refills with the persons active. 0 reads every standing."},
	}
}

// AuthzConfig holds the authorization settings.
type AuthzConfig struct {
	// StandingCacheTTL is authz.standing_cache_ttl.
	StandingCacheTTL time.Duration `config:"authz.standing_cache_ttl"`
	// StandingCacheEntries is authz.standing_cache_entries.
	StandingCacheEntries int `config:"authz.standing_cache_entries"`
}
