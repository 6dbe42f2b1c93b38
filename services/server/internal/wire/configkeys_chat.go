package wire

import (
	"time"

	"bothy/server/internal/platform/config"
)

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
		{Name: "chat.post_gather_groups", Kind: config.KindInt, Default: "1", Min: "1", Max: "100", Unit: "units of work", Chapter: chapter02,
			Doc: "Most units of work of gathered posts (chat.post_gather_max) that run at once in one process; a post waits for one to end only while that many run, so posts of a quiet server never wait (ADR 0098). One lets every post that arrives meanwhile join the next unit of work, which costs least per post (D-RT-14); raise it where PostgreSQL has cores to spare and posting is the server's main load."},
		{Name: "chat.channel_cache_ttl", Kind: config.KindDuration, Default: "1m", Min: "0s", Max: "1h", Chapter: chapter02,
			Doc: "How long a process that serves the API may answer a channel (its space) from memory instead of the database (ADR 0103); every change of a channel reaches every such process through PostgreSQL at its commit, so this only bounds what a missed change could keep alive. 0 reads every channel."},
		{Name: "chat.channel_cache_entries", Kind: config.KindInt, Default: "10000", Min: "0", Max: "10000000", Unit: "channels", Chapter: chapter02,
			Doc: "Most channels a process keeps in memory (about 200 bytes each); a full cache is emptied and refills with the channels in use. 0 reads every channel."},
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
	// ChannelCacheTTL is chat.channel_cache_ttl.
	ChannelCacheTTL time.Duration `config:"chat.channel_cache_ttl"`
	// ChannelCacheEntries is chat.channel_cache_entries.
	ChannelCacheEntries int `config:"chat.channel_cache_entries"`
}
