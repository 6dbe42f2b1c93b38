// Package specyaml reads and edits an OpenAPI document as a YAML node tree.
// The tools of this module (routegen, apicheck, apitables) use it so that
// they keep key order, comments and scalar styles, and report positions.
package specyaml

import (
	"errors"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Parse decodes a YAML document whose root is a mapping and returns that
// root mapping's document node.
func Parse(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("spec: the document is not a mapping")
	}
	return &doc, nil
}

// Root returns the root mapping of a document returned by Parse.
func Root(doc *yaml.Node) *yaml.Node { return doc.Content[0] }

// Get returns the value of key in mapping m, or nil when m is not a
// mapping or has no such key.
func Get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Path follows keys through nested mappings; nil when a step is missing.
func Path(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = Get(m, k)
	}
	return m
}

// Set replaces the value of key in mapping m, or appends the pair.
func Set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// Delete removes key from mapping m.
func Delete(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

// Scalar returns the value of a scalar node, or "".
func Scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// Strings returns the scalar values of a sequence node.
func Strings(n *yaml.Node) []string {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

// Pair is one key and value of a mapping.
type Pair struct {
	Key   string
	Value *yaml.Node
}

// Pairs returns the entries of mapping m in document order.
func Pairs(m *yaml.Node) []Pair {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]Pair, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, Pair{Key: m.Content[i].Value, Value: m.Content[i+1]})
	}
	return out
}

// DeepCopy returns an independent copy of the tree below n.
func DeepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = DeepCopy(child)
	}
	c.Alias = DeepCopy(n.Alias)
	return &c
}

// HTTPMethods are the operation keys of a path item, in the order the
// tools visit them.
var HTTPMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// WebhooksKey is the top-level extension that carries the outgoing webhook
// deliveries in an OpenAPI 3.0 document (the Redoc convention; OpenAPI 3.1
// calls it `webhooks`).
const WebhooksKey = "x-webhooks"

// Operation is one operation of the document.
type Operation struct {
	// ID is the operationId ("" when missing).
	ID string
	// Method is the lower-case HTTP method key.
	Method string
	// Path is the path template under `paths`, or the event type under
	// x-webhooks.
	Path string
	// Webhook is true for entries of x-webhooks.
	Webhook bool
	// Node is the operation object.
	Node *yaml.Node
	// PathItem is the path item the operation belongs to.
	PathItem *yaml.Node
}

// Operations lists the operations under `paths` and, when webhooks is
// true, then those under x-webhooks, in document order.
func Operations(doc *yaml.Node, webhooks bool) []Operation {
	var ops []Operation
	add := func(items *yaml.Node, webhook bool) {
		for _, p := range Pairs(items) {
			for _, m := range HTTPMethods {
				if op := Get(p.Value, m); op != nil {
					ops = append(ops, Operation{
						ID: Scalar(Get(op, "operationId")), Method: m, Path: p.Key,
						Webhook: webhook, Node: op, PathItem: p.Value,
					})
				}
			}
		}
	}
	add(Get(Root(doc), "paths"), false)
	if webhooks {
		add(Get(Root(doc), WebhooksKey), true)
	}
	return ops
}

// Refs appends the value of every $ref below n.
func Refs(n *yaml.Node, refs []string) []string {
	if n == nil {
		return refs
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "$ref" && n.Content[i+1].Kind == yaml.ScalarNode {
				refs = append(refs, n.Content[i+1].Value)
				continue
			}
			refs = Refs(n.Content[i+1], refs)
		}
		return refs
	}
	for _, c := range n.Content {
		refs = Refs(c, refs)
	}
	return refs
}

// Resolve follows a local $ref of n ("#/components/<section>/<name>") and
// returns the target, or n itself when it is no reference or the target is
// missing.
func Resolve(doc, n *yaml.Node) *yaml.Node {
	for range 16 { // references to references, bounded
		ref := Scalar(Get(n, "$ref"))
		section, name, ok := SplitComponentRef(ref)
		if !ok {
			return n
		}
		target := Path(Root(doc), "components", section, name)
		if target == nil {
			return n
		}
		n = target
	}
	return n
}

// SplitComponentRef splits "#/components/<section>/<name>".
func SplitComponentRef(ref string) (section, name string, ok bool) {
	const prefix = "#/components/"
	if len(ref) <= len(prefix) || ref[:len(prefix)] != prefix {
		return "", "", false
	}
	rest := ref[len(prefix):]
	for i := range len(rest) {
		if rest[i] == '/' {
			if i == 0 || i == len(rest)-1 {
				return "", "", false
			}
			for j := i + 1; j < len(rest); j++ {
				if rest[j] == '/' {
					return "", "", false
				}
			}
			return rest[:i], rest[i+1:], true
		}
	}
	return "", "", false
}
