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
		{Name: "identity.password_min_length", Kind: config.KindInt, Default: "12", Min: "8", Max: "128", Unit: "characters", Chapter: chapter19,
			Doc: "Fewest characters of a new password."},
	}
}

// IdentityConfig holds the session and password settings.
type IdentityConfig struct {
	// SessionTTL is identity.session_ttl.
	SessionTTL time.Duration `config:"identity.session_ttl"`
	// StepUpMaxAge is identity.step_up_max_age.
	StepUpMaxAge time.Duration `config:"identity.step_up_max_age"`
	// PasswordMinLength is identity.password_min_length.
	PasswordMinLength int `config:"identity.password_min_length"`
}
