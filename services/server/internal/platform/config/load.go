package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// rawValue is a value before parsing: text, or items of a YAML sequence.
type rawValue struct {
	text   string
	items  []string
	list   bool // items came from a YAML sequence
	source Source
	env    string
}

// placeholderRE finds <key.name> inside a secret reference.
var placeholderRE = regexp.MustCompile(`<([^<>]*)>`)

// yamlLineRE finds the line number in an error of the YAML parser.
var yamlLineRE = regexp.MustCompile(`line ([0-9]+)`)

// LoadFile reads the YAML file at path (none when path is empty) and calls
// Load. A file that cannot be read gives an error wrapping the os error.
func (r *Registry) LoadFile(path string, environ []string) (*Values, error) {
	var doc []byte
	if path != "" {
		var err error
		if doc, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("config: reading the configuration file: %w", err)
		}
	}
	return r.Load(doc, environ)
}

// Load builds the values from the defaults, the YAML document doc (may be
// empty) and environ (entries NAME=value as from os.Environ; only BOTHY_
// variables are read, the first of two equal names wins). The environment
// wins over the file, the file over the defaults. Placeholders in secret
// references resolve against the loaded values.
//
// The error is an *Error naming every unknown key, unknown variable and
// invalid value, never a value.
func (r *Registry) Load(doc []byte, environ []string) (*Values, error) {
	raw := map[string]rawValue{}
	var ps []Problem
	ps = append(ps, r.readFile(doc, raw)...)
	ps = append(ps, r.readEnv(environ, raw)...)

	v := &Values{reg: r, vals: map[string]any{}, src: map[string]Source{}}
	// Secret references last: their placeholders need the other values.
	var refs []Key
	for _, k := range r.keys {
		if k.Kind == KindSecretRef {
			refs = append(refs, k)
			continue
		}
		ps = append(ps, r.set(v, k, raw)...)
	}
	for _, k := range refs {
		ps = append(ps, r.set(v, k, raw)...)
	}
	if err := errorOf(ps); err != nil {
		return nil, err
	}
	return v, nil
}

// set parses the raw value of k (or its default) into v.
func (r *Registry) set(v *Values, k Key, raw map[string]rawValue) []Problem {
	rv, ok := raw[k.Name]
	if !ok {
		rv = rawValue{text: k.Default, source: SourceDefault}
	}
	bad := func(rule string) []Problem {
		return []Problem{{Key: k.Name, Env: rv.env, Source: rv.source, Rule: rule}}
	}
	if k.Kind == KindSecretRef {
		text, rule, skip := r.resolvePlaceholders(v, rv.text)
		if skip {
			return nil // a referenced key is invalid and already reported
		}
		if rule != "" {
			return bad(rule)
		}
		rv.text = text
	}
	val, rule := k.parse(rv)
	if rule == "" {
		rule = k.checkBounds(r.bounds[k.Name], val)
	}
	if rule != "" {
		return bad(rule)
	}
	v.vals[k.Name], v.src[k.Name] = val, rv.source
	return nil
}

// resolvePlaceholders replaces <key.name> in a secret reference with the
// loaded value of a path or string key. skip reports that a referenced key
// has no value because it is itself invalid.
func (r *Registry) resolvePlaceholders(v *Values, text string) (out, rule string, skip bool) {
	out = placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		name := m[1 : len(m)-1]
		k, ok := r.Lookup(name)
		if !ok || k.Secret || (k.Kind != KindPath && k.Kind != KindString) {
			rule = "a placeholder must name a path or string key, such as <secrets.dir>"
			return m
		}
		val, ok := v.vals[name]
		if !ok {
			skip = true
			return m
		}
		return val.(string)
	})
	return out, rule, skip && rule == ""
}

// readEnv copies the BOTHY_ variables of environ into raw.
func (r *Registry) readEnv(environ []string, raw map[string]rawValue) []Problem {
	var ps []Problem
	seen := map[string]bool{}
	for _, e := range environ {
		name, val, _ := strings.Cut(e, "=")
		if !strings.HasPrefix(name, EnvPrefix) || r.ignoreEnv[name] || seen[name] {
			continue
		}
		seen[name] = true
		i, ok := r.env[name]
		if !ok {
			ps = append(ps, Problem{Env: name, Source: SourceEnv, Rule: "unknown configuration variable (see docs/operations/configuration.md)"})
			continue
		}
		raw[r.keys[i].Name] = rawValue{text: val, source: SourceEnv, env: name}
	}
	return ps
}

// readFile walks the YAML document into raw.
func (r *Registry) readFile(doc []byte, raw map[string]rawValue) []Problem {
	fileProblem := func(rule string) []Problem { return []Problem{{Source: SourceFile, Rule: rule}} }
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var root yaml.Node
	if err := dec.Decode(&root); errors.Is(err, io.EOF) {
		return nil
	} else if err != nil {
		// The parser's message may quote the document: keep the line only.
		rule := "the file is not valid YAML"
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			rule += " (line " + m[1] + ")"
		}
		return fileProblem(rule)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		return fileProblem("the file must hold exactly one YAML document")
	}
	n := &root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = deref(n.Content[0])
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fileProblem("the file must be a mapping of keys")
	}
	w := &walker{r: r, raw: raw, seen: map[string]bool{}}
	w.walk(n, "")
	return w.ps
}

// walker turns nested YAML maps into dotted names.
type walker struct {
	r    *Registry
	raw  map[string]rawValue
	seen map[string]bool
	ps   []Problem
}

func (w *walker) bad(name, rule string) {
	w.ps = append(w.ps, Problem{Key: name, Source: SourceFile, Rule: rule})
}

func (w *walker) walk(n *yaml.Node, prefix string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := deref(n.Content[i]), deref(n.Content[i+1])
		if kn.Kind != yaml.ScalarNode {
			w.bad(prefix, "keys must be plain names")
			continue
		}
		name := kn.Value
		if prefix != "" {
			name = prefix + "." + kn.Value
		}
		switch {
		case strings.Contains(kn.Value, "."):
			w.bad(name, "must not be written with dots: nest the parts as maps")
		case w.seen[name]:
			w.bad(name, "is set twice in the file")
		case w.r.groups[name]:
			w.seen[name] = true
			if vn.Kind == yaml.MappingNode {
				w.walk(vn, name)
			} else if !isNull(vn) {
				w.bad(name, "is a group of keys, not a value")
			}
		default:
			w.seen[name] = true
			k, ok := w.r.Lookup(name)
			if !ok {
				w.bad(name, "unknown key (see docs/operations/configuration.md)")
				continue
			}
			w.leaf(k, vn)
		}
	}
}

func (w *walker) leaf(k Key, vn *yaml.Node) {
	if kinds[k.Kind].list {
		rv := rawValue{list: true, source: SourceFile}
		switch {
		case isNull(vn):
		case vn.Kind == yaml.SequenceNode:
			for _, it := range vn.Content {
				if it = deref(it); it.Kind != yaml.ScalarNode {
					w.bad(k.Name, "must be a list of single values")
					return
				}
				rv.items = append(rv.items, it.Value)
			}
		default:
			w.bad(k.Name, "must be a list (a YAML sequence)")
			return
		}
		w.raw[k.Name] = rv
		return
	}
	if vn.Kind != yaml.ScalarNode {
		w.bad(k.Name, "must be a single value, not a list or a map")
		return
	}
	text := vn.Value
	if isNull(vn) {
		text = ""
	}
	w.raw[k.Name] = rawValue{text: text, source: SourceFile}
}

// deref follows YAML aliases to their anchors.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }
