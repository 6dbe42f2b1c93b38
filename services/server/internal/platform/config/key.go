package config

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"bothy/server/internal/kernel/hostlist"
	"bothy/server/internal/platform/secrets"
)

// EnvPrefix starts the environment variable of every key.
const EnvPrefix = "BOTHY_"

// EnvName returns the environment variable of a key name: EnvPrefix plus the
// name in upper case with dots and dashes as underscores, for example
// BOTHY_WEBHOOK_RETRY_BACKOFF_BASE for webhook.retry_backoff_base.
func EnvName(name string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(name))
}

// Kind is the type of a key's value.
type Kind string

// The kinds. The accessor of Values that reads each is named in brackets.
const (
	// KindString is free text, or one of Key.Enum when set [String].
	KindString Kind = "string"
	// KindInt is a whole number, bounded by Min and Max [Int].
	KindInt Kind = "int"
	// KindBool is true or false [Bool].
	KindBool Kind = "bool"
	// KindDuration is a duration such as 90s, 1h30m or 30d (ParseDuration)
	// [Duration].
	KindDuration Kind = "duration"
	// KindByteSize is a size such as 65536, 64KiB or 1MiB (ParseByteSize)
	// [Bytes].
	KindByteSize Kind = "byte_size"
	// KindStringList is a list: a YAML sequence in the file, comma-separated
	// in the environment [Strings].
	KindStringList Kind = "string_list"
	// KindHostList is a list of host[:port][;allow_private] entries
	// (internal/kernel/hostlist) [HostList, Strings].
	KindHostList Kind = "host_list"
	// KindSecretRef is a reference file:<path> to a secret, resolved by
	// platform/secrets. Placeholders <key.name> inside it resolve against
	// the loaded value of a path or string key, for example
	// file:<secrets.dir>/webhook_hmac_master_key [String].
	KindSecretRef Kind = "secret_ref"
	// KindURL is an absolute URL with one of Key.Schemes and a host [String].
	KindURL Kind = "url"
	// KindAddress is a listen address host:port [String].
	KindAddress Kind = "address"
	// KindPath is a file or directory path [String].
	KindPath Kind = "path"
)

// kindInfo is what the loader, the schema and the reference need per kind.
type kindInfo struct {
	label   string // type column of the reference
	ordered bool   // Min and Max apply
	list    bool
	text    bool // the value is a string (String reads it; Optional applies)
	rule    string
}

var kinds = map[Kind]kindInfo{
	KindString:     {label: "string", text: true},
	KindInt:        {label: "integer", ordered: true, rule: "must be a whole number"},
	KindBool:       {label: "boolean", rule: "must be true or false"},
	KindDuration:   {label: "duration", ordered: true, rule: "must be a duration such as 90s, 15m, 12h or 30d"},
	KindByteSize:   {label: "byte size", ordered: true, rule: "must be a byte size such as 65536, 64KiB or 1MiB"},
	KindStringList: {label: "list of strings", list: true},
	KindHostList:   {label: "list of host[:port][;allow_private]", list: true},
	KindSecretRef:  {label: "secret reference", text: true, rule: "must be a secret reference file:<path>"},
	KindURL:        {label: "URL", text: true},
	KindAddress:    {label: "host:port", text: true, rule: "must be host:port with a port number from 0 to 65535"},
	KindPath:       {label: "path", text: true, rule: "must be a file path"},
}

// Key is one named configuration setting.
type Key struct {
	// Name is the dotted name, lower case: area.setting or deeper
	// (jobs.queue.delivery.max_workers).
	Name string
	// Kind is the type of the value.
	Kind Kind
	// Default is the value when neither file nor environment sets the key,
	// written as an operator would write it ("5s", "64KiB", "a,b" for a
	// list). It must pass the key's own validation. Empty means "not set"
	// and is only allowed for lists and Optional keys.
	Default string
	// Min and Max are inclusive bounds in the syntax of the kind ("1", "1s",
	// "1KiB"); only for int, duration and byte size. Empty: no bound.
	Min, Max string
	// MinExclusive makes Min itself invalid, for "above zero" (Min "0s").
	MinExclusive bool
	// Enum lists the allowed values of a string key.
	Enum []string
	// Schemes lists the allowed schemes of a URL key (required for URLs).
	Schemes []string
	// HostInQuery lets a URL key name its host in the query parameter host
	// instead of its authority, as libpq allows for the directory of a Unix
	// socket (postgres:///bothy?host=/run/postgresql); only for URLs.
	HostInQuery bool
	// Optional allows the empty value for a text kind (string, URL, address,
	// path, secret reference), meaning "not set".
	Optional bool
	// Unit names what an integer counts ("deliveries", "connections").
	Unit string
	// Doc is one English sentence for the reference table.
	Doc string
	// Chapter is the specification chapter that defines the key, a file of
	// docs/spec such as "11-extensions.md".
	Chapter string
	// Secret marks a key whose value may itself be a secret (a URL with a
	// password). No value is ever printed; Secret also shows in the
	// reference and in the schema.
	Secret bool
}

// parse converts the raw value of the key, reporting a constant rule on
// failure. Bounds are checked by the caller.
func (k Key) parse(rv rawValue) (any, string) {
	info := kinds[k.Kind]
	if info.list {
		if !rv.list {
			rv.items = splitList(rv.text)
		}
		items := make([]string, 0, len(rv.items))
		for _, it := range rv.items {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		if k.Kind == KindHostList {
			l, err := hostlist.Parse(items)
			if err != nil {
				return nil, "must list entries host[:port][;allow_private]: " + err.Error()
			}
			return hostValue{raw: items, list: l}, ""
		}
		return items, ""
	}
	s := strings.TrimSpace(rv.text)
	if s == "" {
		if info.text && k.Optional {
			return "", ""
		}
		return nil, "must not be empty"
	}
	switch k.Kind {
	case KindString:
		if len(k.Enum) > 0 && !slices.Contains(k.Enum, s) {
			return nil, "must be one of " + strings.Join(k.Enum, ", ")
		}
		return s, ""
	case KindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, info.rule
		}
		return n, ""
	case KindBool:
		switch s {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, info.rule
	case KindDuration:
		d, err := ParseDuration(s)
		if err != nil {
			return nil, info.rule
		}
		return d, ""
	case KindByteSize:
		n, err := ParseByteSize(s)
		if err != nil {
			return nil, info.rule
		}
		return n, ""
	case KindURL:
		u, err := url.Parse(s)
		if err != nil || u.Opaque != "" || !slices.Contains(k.Schemes, u.Scheme) ||
			(u.Host == "" && !k.HostInQuery) {
			return nil, "must be an absolute URL with scheme " + strings.Join(k.Schemes, " or ")
		}
		if u.Host == "" && u.Query().Get("host") == "" {
			return nil, "must be an absolute URL with scheme " + strings.Join(k.Schemes, " or ") +
				" and a host (or the query parameter host)"
		}
		return s, ""
	case KindAddress:
		_, port, err := net.SplitHostPort(s)
		if err != nil {
			return nil, info.rule
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return nil, info.rule
		}
		return s, ""
	case KindPath:
		if strings.ContainsRune(s, 0) {
			return nil, info.rule
		}
		return s, ""
	case KindSecretRef:
		if _, err := secrets.ParseRef(s); err != nil {
			return nil, info.rule
		}
		return s, ""
	}
	return nil, "has an unknown kind"
}

// splitList splits the environment form of a list at commas.
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// hostValue keeps a host list as written and parsed.
type hostValue struct {
	raw  []string
	list hostlist.List
}

// bounds are the parsed Min and Max of an ordered key.
type bounds struct {
	min, max       int64
	hasMin, hasMax bool
}

// parseBound parses one bound in the syntax of the key's kind.
func (k Key) parseBound(s string) (int64, bool) {
	switch k.Kind {
	case KindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	case KindDuration:
		d, err := ParseDuration(s)
		return int64(d), err == nil
	case KindByteSize:
		n, err := ParseByteSize(s)
		return n, err == nil
	}
	return 0, false
}

// checkBounds reports the rule a parsed ordered value breaks, or "".
func (k Key) checkBounds(b bounds, v any) string {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case time.Duration:
		n = int64(x)
	default:
		return ""
	}
	switch {
	case b.hasMin && k.MinExclusive && n <= b.min:
		return "must be above " + k.Min
	case b.hasMin && n < b.min:
		return "must be at least " + k.Min
	case b.hasMax && n > b.max:
		return "must be at most " + k.Max
	}
	return ""
}
