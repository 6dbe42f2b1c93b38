// Package config is the one registry of bothy's named configuration keys and
// their loader.
//
// Every setting is a Key with a dotted name (webhook.retry_backoff_base), a
// Kind, a default, optional bounds, a unit, one English doc line and the
// specification chapter that defines it. internal/wire registers the keys
// (configkeys_<area>.go) and the cross checks between them; nothing else reads
// configuration, and platform packages receive Options structs instead.
//
// Loading takes the defaults, then a YAML file whose nested maps follow the
// dots:
//
//	webhook:
//	  retry_backoff_base: 5s
//
// then environment variables BOTHY_<NAME> (upper case, dots and dashes as
// underscores, BOTHY_WEBHOOK_RETRY_BACKOFF_BASE), which win over the file.
// Unknown keys in the file and unknown BOTHY_ variables are errors, so a typo
// never falls back to a default silently.
//
// Errors name the key, where its value came from and the rule it broke, and
// never the value: a value may be a secret (database.url may carry a
// password), and a rule is enough to fix it. The same registry renders the
// reference table of docs/operations/configuration.md (Reference) and a
// JSON Schema for editors (Schema).
package config
