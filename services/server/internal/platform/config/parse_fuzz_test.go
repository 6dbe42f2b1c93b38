package config_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/config"
)

// FuzzParseDuration: never panics; an accepted duration is not negative and
// survives a round trip through its Go rendering.
func FuzzParseDuration(f *testing.F) {
	for _, seed := range []string{
		"5s",             // plain Go duration
		"1h30m",          // compound
		"30d",            // days, our extension
		"1d12h",          // days then Go units
		"0",              // bare zero, as Go allows
		"-5s",            // negative, rejected
		"d",              // a unit without number
		"1d1d",           // two day parts
		"9999999999999d", // overflow
		"1.5d",           // fractional days, rejected
		"",               // empty
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := config.ParseDuration(s)
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, d, int64(0))
		again, err := config.ParseDuration(d.String())
		require.NoError(t, err)
		require.Equal(t, d, again)
	})
}

// FuzzParseByteSize: never panics; an accepted size is not negative and
// survives a round trip through its plain decimal form.
func FuzzParseByteSize(f *testing.F) {
	for _, seed := range []string{
		"65536",          // plain bytes
		"64KiB",          // binary unit
		"1GiB",           // largest unit
		"2048B",          // explicit B
		"1MB",            // decimal unit, rejected
		"-1",             // negative, rejected
		"99999999999GiB", // overflow
		"0x10",           // hex, rejected
		"",               // empty
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := config.ParseByteSize(s)
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, n, int64(0))
		again, err := config.ParseByteSize(strconv.FormatInt(n, 10))
		require.NoError(t, err)
		require.Equal(t, n, again)
	})
}
