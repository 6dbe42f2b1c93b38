package config

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// durationPattern is the syntax of a duration: Go's time.ParseDuration
// without sign, optionally led by a number of days ("30d", "1d12h"). The
// JSON Schema uses the same pattern, so editor and loader agree.
const durationPattern = `^(0|([0-9]+d)?([0-9]+(\.[0-9]+)?(ns|us|µs|μs|ms|s|m|h))*)$`

// byteSizePattern is the syntax of a byte size: a whole number of bytes with
// an optional binary unit.
const byteSizePattern = `^[0-9]+(B|KiB|MiB|GiB)?$`

var (
	durationRE = regexp.MustCompile(durationPattern)
	byteSizeRE = regexp.MustCompile(byteSizePattern)

	errDuration = errors.New("config: not a duration")
	errByteSize = errors.New("config: not a byte size")
)

const day = 24 * time.Hour

// ParseDuration parses a duration such as 250ms, 90s, 1h30m, 30d or 1d12h:
// the syntax of time.ParseDuration without a sign, with a leading number of
// days allowed. It rejects negative values, fractional days and overflow.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" || !durationRE.MatchString(s) {
		return 0, errDuration
	}
	var days int64
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n > int64(math.MaxInt64/day) {
			return 0, errDuration
		}
		days, rest = n, s[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if d, err = time.ParseDuration(rest); err != nil {
			return 0, errDuration
		}
	}
	total := time.Duration(days) * day
	if d > math.MaxInt64-total {
		return 0, errDuration
	}
	return total + d, nil
}

// ParseByteSize parses a byte size such as 65536, 2048B, 64KiB, 16MiB or
// 1GiB. Decimal units (KB, MB) are rejected on purpose: they are ambiguous.
func ParseByteSize(s string) (int64, error) {
	m := byteSizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, errByteSize
	}
	digits := strings.TrimSuffix(s, m[1])
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, errByteSize
	}
	var unit int64 = 1
	switch m[1] {
	case "KiB":
		unit = 1 << 10
	case "MiB":
		unit = 1 << 20
	case "GiB":
		unit = 1 << 30
	}
	if n > math.MaxInt64/unit {
		return 0, errByteSize
	}
	return n * unit, nil
}
