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
}
