package wire

import "bothy/server/internal/platform/config"

// chatConfigKeys are the keys of the chat module.
func chatConfigKeys() []config.Key {
	return []config.Key{
		{Name: "chat.message_max_bytes", Kind: config.KindByteSize, Default: "16KiB", Min: "1", Max: "1MiB", Chapter: chapter03,
			Doc: "Largest text of one message in bytes of UTF-8; a longer one is rejected with validation_failed."},
	}
}

// ChatConfig holds the chat settings.
type ChatConfig struct {
	// MessageMaxBytes is chat.message_max_bytes.
	MessageMaxBytes int64 `config:"chat.message_max_bytes"`
}
