package wire

// The specification chapters of docs/spec that define configuration keys
// (config.Key.Chapter). One constant per chapter, shared by every
// configkeys_<area>.go file.
const (
	chapter02 = "02-architecture.md"
	chapter03 = "03-data-model.md"
	chapter04 = "04-sync-protocol.md"
	chapter06 = "06-api.md"
	chapter11 = "11-extensions.md"
	chapter19 = "19-security.md"
	chapter20 = "20-privacy.md"
)
