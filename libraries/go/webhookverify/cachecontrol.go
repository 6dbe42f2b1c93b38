package webhookverify

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// freshness returns how long an answer may be used from the moment it was
// requested (RFC 9111 4.2): the max-age directive of Cache-Control less
// the Age header, or 0 when there is no max-age, when no-store or no-cache
// is present, or when a value is not a decimal number of seconds. The
// caller applies its own lower and upper bounds.
func freshness(h http.Header) time.Duration {
	maxAge := time.Duration(-1)
	for _, line := range h.Values("Cache-Control") {
		for _, directive := range strings.Split(line, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(directive), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return 0
			case "max-age":
				secs, ok := seconds(strings.Trim(strings.TrimSpace(value), `"`))
				if !ok {
					return 0
				}
				maxAge = secs
			}
		}
	}
	if maxAge < 0 {
		return 0
	}
	if age, ok := seconds(strings.TrimSpace(h.Get("Age"))); ok {
		maxAge -= age
	}
	return max(maxAge, 0)
}

// seconds reads a non-negative decimal number of seconds; values beyond
// what a Duration holds are cut to a large one (callers bound it anyway).
func seconds(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > int64(100*365*24*time.Hour/time.Second) {
		return 100 * 365 * 24 * time.Hour, true
	}
	return time.Duration(n) * time.Second, true
}
