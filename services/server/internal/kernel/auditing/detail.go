package auditing

import (
	"errors"
	"regexp"

	"bothy/server/internal/kernel/ids"
)

// Detail is one fact of an entry: a key and a typed value. Build it with ID,
// Code, Int, Bool or List; the zero Detail is rejected by Validate. A helper
// given a bad key or value does not fail at once: it returns a Detail that
// makes Validate (and so Record) fail, so call sites stay one expression.
type Detail struct {
	key   string
	value any
	err   error
}

// Key returns the detail's key.
func (d Detail) Key() string { return d.key }

// Value returns the detail's value: a string (ID, Code), int64, bool or
// []string (List).
func (d Detail) Value() any { return d.value }

var keyPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

var (
	errKey  = errors.New("key is not a lower-case identifier")
	errCode = errors.New("value is not a code")
	errID   = errors.New("identifier is zero")
)

func detail(key string, value any, err error) Detail {
	if !keyPattern.MatchString(key) {
		return Detail{key: key, err: errKey}
	}
	if err != nil {
		return Detail{key: key, err: err}
	}
	return Detail{key: key, value: value}
}

// ID returns a detail holding an identifier, such as subscription_id. A Zero
// identifier is rejected: leave the detail out instead.
func ID(key string, v ids.ID) Detail {
	if v.IsZero() {
		return detail(key, nil, errID)
	}
	return detail(key, v.String(), nil)
}

// Code returns a detail holding a code: 1 to 64 characters of
// [a-z0-9_.:-], for example a state ("paused"), a cause ("gone") or a host
// with port ("hooks.example.com:8443"). Anything else (spaces, slashes,
// upper case, so no free text, path or URL) is rejected.
func Code(key, v string) Detail {
	if !ValidCode(v) {
		return detail(key, nil, errCode)
	}
	return detail(key, v, nil)
}

// Int returns a detail holding an integer, such as an event seq or a
// generation.
func Int(key string, v int64) Detail { return detail(key, v, nil) }

// Bool returns a detail holding a flag, such as hmac_enabled.
func Bool(key string, v bool) Detail { return detail(key, v, nil) }

// List returns a detail holding a list of codes, such as event_types. Every
// element must be a code; an empty list is stored as [].
func List(key string, codes ...string) Detail {
	out := make([]string, 0, len(codes))
	for _, c := range codes {
		if !ValidCode(c) {
			return detail(key, nil, errCode)
		}
		out = append(out, c)
	}
	return detail(key, out, nil)
}
