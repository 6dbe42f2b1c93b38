package config

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// SchemaDraft is the JSON Schema dialect of Schema.
const SchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// Schema returns a JSON Schema (2020-12) of the configuration file: nested
// objects by the dots, no unknown properties, and per key its JSON type,
// default, description and bounds (minimum and maximum for integers; for
// durations and byte sizes the bounds as written in x-bothy-min and
// x-bothy-max). The annotations x-bothy-kind, x-bothy-chapter, x-bothy-env,
// x-bothy-unit and x-bothy-secret carry the rest of the registry.
func (r *Registry) Schema() ([]byte, error) {
	root := schemaObject()
	root["$schema"] = SchemaDraft
	root["title"] = "bothy configuration file"
	root["description"] = "Keys of docs/operations/configuration.md section 4. Environment variables BOTHY_<KEY> win over the file."
	for _, k := range r.keys {
		parts := strings.Split(k.Name, ".")
		node := root
		for _, p := range parts[:len(parts)-1] {
			props := node["properties"].(map[string]any)
			child, ok := props[p].(map[string]any)
			if !ok {
				child = schemaObject()
				props[p] = child
			}
			node = child
		}
		node["properties"].(map[string]any)[parts[len(parts)-1]] = r.keySchema(k)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep <secrets.dir> readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func schemaObject() map[string]any {
	return map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}}
}

func (r *Registry) keySchema(k Key) map[string]any {
	s := map[string]any{
		"description":     k.Doc,
		"x-bothy-kind":    string(k.Kind),
		"x-bothy-chapter": k.Chapter,
		"x-bothy-env":     EnvName(k.Name),
	}
	if k.Unit != "" {
		s["x-bothy-unit"] = k.Unit
	}
	if k.Secret {
		s["x-bothy-secret"] = true
	}
	if k.Min != "" {
		s["x-bothy-min"] = k.Min
	}
	if k.Max != "" {
		s["x-bothy-max"] = k.Max
	}
	if k.MinExclusive {
		s["x-bothy-min-exclusive"] = true
	}
	b := r.bounds[k.Name]
	numeric := func() {
		if b.hasMin {
			if k.MinExclusive {
				s["exclusiveMinimum"] = b.min
			} else {
				s["minimum"] = b.min
			}
		}
		if b.hasMax {
			s["maximum"] = b.max
		}
	}
	text := func(pattern string) {
		s["type"] = "string"
		if pattern != "" {
			s["pattern"] = pattern
		}
		if !k.Optional {
			s["minLength"] = 1
		}
		s["default"] = k.Default
	}
	switch k.Kind {
	case KindInt:
		s["type"] = "integer"
		numeric()
		n, _ := k.parseBound(k.Default)
		s["default"] = n
	case KindBool:
		s["type"] = "boolean"
		s["default"] = k.Default == "true"
	case KindDuration:
		text(durationPattern)
	case KindByteSize:
		text(byteSizePattern)
		s["type"] = []string{"integer", "string"}
		numeric()
	case KindStringList, KindHostList:
		items := map[string]any{"type": "string"}
		if k.Kind == KindHostList {
			items["pattern"] = `^[^/?#@; \t]+(;allow_private)?$`
		}
		s["type"], s["items"] = "array", items
		def := []string{}
		for _, it := range splitList(k.Default) {
			if it = strings.TrimSpace(it); it != "" {
				def = append(def, it)
			}
		}
		s["default"] = def
	case KindString:
		text("")
		if len(k.Enum) > 0 {
			s["enum"] = k.Enum
		}
	case KindURL:
		quoted := make([]string, len(k.Schemes))
		for i, sc := range k.Schemes {
			quoted[i] = regexp.QuoteMeta(sc)
		}
		text(optionalPattern(`(`+strings.Join(quoted, "|")+`)://.+`, k.Optional))
		s["format"] = "uri"
	case KindSecretRef:
		text(optionalPattern(`file:.+`, k.Optional))
	case KindAddress:
		text(optionalPattern(`.*:[0-9]{1,5}`, k.Optional))
	case KindPath:
		text("")
	}
	return s
}

// optionalPattern anchors a pattern and lets an optional key be empty.
func optionalPattern(p string, optional bool) string {
	if optional {
		return `^(` + p + `)?$`
	}
	return `^` + p + `$`
}
