package app_test

import (
	"bytes"
	"encoding/hex"
)

// hexDecode decodes a master key file's content (hex and one newline).
func hexDecode(dst, file []byte) (int, error) { return hex.Decode(dst, bytes.TrimSpace(file)) }
