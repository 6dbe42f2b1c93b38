package config

import (
	"regexp"
	"slices"
	"strings"
)

var (
	nameRE    = regexp.MustCompile(`^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$`)
	chapterRE = regexp.MustCompile(`^[0-9]{2}-[a-z0-9-]+\.md$`)
)

// RegistryOptions configure a Registry.
type RegistryOptions struct {
	// IgnoreEnv lists BOTHY_ variables that are not keys (the path of the
	// configuration file, variables of the development scripts), so Load
	// does not report them as unknown.
	IgnoreEnv []string
}

// Registry is the validated set of keys. It is immutable and safe for
// concurrent use.
type Registry struct {
	keys      []Key // sorted by name
	index     map[string]int
	env       map[string]int
	groups    map[string]bool // every proper prefix of a name: t, t.deep, ...
	bounds    map[string]bounds
	ignoreEnv map[string]bool
}

// NewRegistry joins the groups of keys into a registry and validates every
// key: a well-formed unique name that is not a group of another, a unique
// environment variable, a known kind, a one-line doc, a chapter file,
// bounds, enums and schemes that fit the kind, and a default that passes the
// key's own validation (placeholders resolved against the other defaults).
// The error is an *Error listing every problem.
func NewRegistry(o RegistryOptions, groups ...[]Key) (*Registry, error) {
	r := &Registry{
		index:     map[string]int{},
		env:       map[string]int{},
		groups:    map[string]bool{},
		bounds:    map[string]bounds{},
		ignoreEnv: map[string]bool{},
	}
	var ps []Problem
	bad := func(name, rule string) { ps = append(ps, Problem{Key: name, Source: SourceDefault, Rule: rule}) }
	for _, g := range groups {
		r.keys = append(r.keys, g...)
	}
	slices.SortStableFunc(r.keys, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	for i, k := range r.keys {
		if !nameRE.MatchString(k.Name) {
			bad(k.Name, "name must be dotted lower-case parts of letters, digits, _ and -")
			continue
		}
		if _, dup := r.index[k.Name]; dup {
			bad(k.Name, "is registered twice")
			continue
		}
		r.index[k.Name] = i
		env := EnvName(k.Name)
		if j, dup := r.env[env]; dup {
			bad(k.Name, "shares the environment variable "+env+" with "+r.keys[j].Name)
		}
		r.env[env] = i
		parts := strings.Split(k.Name, ".")
		for n := 1; n < len(parts); n++ {
			r.groups[strings.Join(parts[:n], ".")] = true
		}
		for _, rule := range r.validateKey(k) {
			bad(k.Name, rule)
		}
	}
	for name := range r.index {
		if r.groups[name] {
			bad(name, "is both a key and a group of keys")
		}
	}
	for _, e := range o.IgnoreEnv {
		if !strings.HasPrefix(e, EnvPrefix) {
			ps = append(ps, Problem{Env: e, Rule: "an ignored variable must start with " + EnvPrefix})
		} else if j, ok := r.env[e]; ok {
			ps = append(ps, Problem{Env: e, Rule: "an ignored variable must not be the variable of " + r.keys[j].Name})
		}
		r.ignoreEnv[e] = true
	}
	if err := errorOf(ps); err != nil {
		return nil, err
	}
	// Every default must load: this checks defaults, bounds and placeholders
	// through the same code that checks an operator's values.
	if _, err := r.Load(nil, nil); err != nil {
		return nil, err
	}
	return r, nil
}

// validateKey returns the rules k breaks as a definition.
func (r *Registry) validateKey(k Key) []string {
	var rules []string
	info, ok := kinds[k.Kind]
	if !ok {
		return []string{"has an unknown kind"}
	}
	if k.Doc == "" || strings.ContainsAny(k.Doc, "\n\r") {
		rules = append(rules, "doc must be one line of English")
	}
	if !chapterRE.MatchString(k.Chapter) {
		rules = append(rules, "chapter must name a specification chapter file such as 11-extensions.md")
	}
	if len(k.Enum) > 0 && k.Kind != KindString {
		rules = append(rules, "enum applies only to string keys")
	}
	if (len(k.Schemes) > 0) != (k.Kind == KindURL) {
		rules = append(rules, "schemes are required for URL keys and apply to no other kind")
	}
	if k.HostInQuery && k.Kind != KindURL {
		rules = append(rules, "host in query applies only to URL keys")
	}
	if k.Optional && !info.text {
		rules = append(rules, "optional applies only to text kinds")
	}
	if k.Unit != "" && k.Kind != KindInt {
		rules = append(rules, "unit applies only to integer keys")
	}
	if k.Min == "" && k.Max == "" && !k.MinExclusive {
		return rules
	}
	if !info.ordered || (k.MinExclusive && k.Min == "") {
		return append(rules, "bounds apply only to int, duration and byte size keys")
	}
	var b bounds
	if k.Min != "" {
		if b.min, b.hasMin = k.parseBound(k.Min); !b.hasMin {
			rules = append(rules, "bound Min does not parse as the kind")
		}
	}
	if k.Max != "" {
		if b.max, b.hasMax = k.parseBound(k.Max); !b.hasMax {
			rules = append(rules, "bound Max does not parse as the kind")
		}
	}
	if b.hasMin && b.hasMax && b.min > b.max {
		rules = append(rules, "bound Min lies above Max")
	}
	r.bounds[k.Name] = b
	return rules
}

// Keys returns a copy of every key, ordered by name.
func (r *Registry) Keys() []Key { return slices.Clone(r.keys) }

// Lookup returns the key of a name.
func (r *Registry) Lookup(name string) (Key, bool) {
	i, ok := r.index[name]
	if !ok {
		return Key{}, false
	}
	return r.keys[i], true
}
