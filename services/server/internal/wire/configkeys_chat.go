package wire

import "bothy/server/internal/platform/config"

// chatConfigKeys are the keys of the chat module.
func chatConfigKeys() []config.Key {
	return []config.Key{
		{Name: "chat.message_max_bytes", Kind: config.KindByteSize, Default: "16KiB", Min: "1", Max: "1MiB", Chapter: chapter03,
			Doc: "Largest text of one message in bytes of UTF-8; a longer one is rejected with validation_failed."},
		{Name: "chat.name_max_chars", Kind: config.KindInt, Default: "80", Min: "1", Max: "1000", Unit: "characters", Chapter: chapter03,
			Doc: "Longest name of a space or channel; a longer one is rejected with validation_failed."},
		{Name: "chat.page_size_default", Kind: config.KindInt, Default: "50", Min: "1", Max: "1000", Unit: "messages", Chapter: chapter06,
			Doc: "Messages on one page of listMessages when the request names no limit."},
		{Name: "chat.post_gather_max", Kind: config.KindInt, Default: "32", Min: "1", Max: "1000", Unit: "posts", Chapter: chapter02,
			Doc: "Most posts of plain messages that share one unit of work: the posts that arrive while another unit of work of posts runs wait for it and then go together, with one BEGIN, one COMMIT and two round trips to PostgreSQL, each decided and answered as if alone (ADR 0098); 1 posts each alone."},
		{Name: "chat.post_gather_groups", Kind: config.KindInt, Default: "2", Min: "1", Max: "100", Unit: "units of work", Chapter: chapter02,
			Doc: "Most units of work of gathered posts (chat.post_gather_max) that run at once in one process; a post waits for one to end only while that many run, so posts of a quiet server never wait (ADR 0098)."},
		{Name: "chat.page_size_max", Kind: config.KindInt, Default: "200", Min: "1", Max: "1000", Unit: "messages", Chapter: chapter06,
			Doc: "Most messages on one page of listMessages; a larger limit is lowered to it."},
	}
}

// ChatConfig holds the chat settings.
type ChatConfig struct {
	// MessageMaxBytes is chat.message_max_bytes.
	MessageMaxBytes int64 `config:"chat.message_max_bytes"`
	// NameMaxChars is chat.name_max_chars.
	NameMaxChars int `config:"chat.name_max_chars"`
	// PageSizeDefault is chat.page_size_default.
	PageSizeDefault int `config:"chat.page_size_default"`
	// PageSizeMax is chat.page_size_max.
	PageSizeMax int `config:"chat.page_size_max"`
	// PostGatherMax is chat.post_gather_max.
	PostGatherMax int `config:"chat.post_gather_max"`
	// PostGatherGroups is chat.post_gather_groups.
	PostGatherGroups int `config:"chat.post_gather_groups"`
}
