package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"bothy/tools/internal/specyaml"
)

// SpecOperation is one operation under `paths` of the source spec.
type SpecOperation = specyaml.Operation

// ParseSpec decodes an OpenAPI document into a YAML node tree, keeping key
// order, comments and scalar styles so the filtered copy reads like the
// source.
func ParseSpec(data []byte) (*yaml.Node, error) {
	return specyaml.Parse(data)
}

// Operations lists the operations under `paths` in file order. It fails when
// an operation has no operationId or an operationId is used twice.
func Operations(doc *yaml.Node) ([]SpecOperation, error) {
	if specyaml.Get(specyaml.Root(doc), "paths") == nil {
		return nil, fmt.Errorf("spec: paths is missing")
	}
	ops := specyaml.Operations(doc, false)
	seen := map[string]bool{}
	for _, op := range ops {
		if op.ID == "" {
			return nil, fmt.Errorf("spec: %s %s has no operationId", strings.ToUpper(op.Method), op.Path)
		}
		if seen[op.ID] {
			return nil, fmt.Errorf("spec: operationId %s is used twice", op.ID)
		}
		seen[op.ID] = true
	}
	return ops, nil
}

// Filter returns a deep copy of doc that keeps only the operations in
// enabled, every component they (or the x-webhooks section) reference,
// directly or through other components, the security schemes they name and
// the tags they use. Everything else of the document stays as it is.
func Filter(doc *yaml.Node, enabled map[string]bool) (*yaml.Node, error) {
	out := specyaml.DeepCopy(doc)
	root := specyaml.Root(out)

	// Paths: drop operations that are not enabled, then empty path items.
	paths := specyaml.Get(root, "paths")
	kept := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	var usedRoots []*yaml.Node
	usedTags := map[string]bool{}
	usedSchemes := map[string]bool{}
	for _, p := range specyaml.Pairs(paths) {
		hasOp := false
		for _, m := range specyaml.HTTPMethods {
			op := specyaml.Get(p.Value, m)
			if op == nil {
				continue
			}
			if !enabled[specyaml.Scalar(specyaml.Get(op, "operationId"))] {
				specyaml.Delete(p.Value, m)
				continue
			}
			hasOp = true
			collectTags(op, usedTags)
			collectSchemes(op, usedSchemes)
		}
		if hasOp {
			kept.Content = append(kept.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p.Key}, p.Value)
			usedRoots = append(usedRoots, p.Value)
		}
	}
	if len(kept.Content) == 0 {
		kept.Style = yaml.FlowStyle
	}
	specyaml.Set(root, "paths", kept)

	if hooks := specyaml.Get(root, specyaml.WebhooksKey); hooks != nil {
		usedRoots = append(usedRoots, hooks)
		for _, p := range specyaml.Pairs(hooks) {
			for _, m := range specyaml.HTTPMethods {
				if op := specyaml.Get(p.Value, m); op != nil {
					collectTags(op, usedTags)
				}
			}
		}
	}
	collectSchemes(root, usedSchemes)

	// Components: the closure of the references from the kept roots.
	components := specyaml.Get(root, "components")
	used, err := referencedComponents(components, usedRoots)
	if err != nil {
		return nil, err
	}
	if components != nil {
		var sections []*yaml.Node
		for _, s := range specyaml.Pairs(components) {
			var keep []*yaml.Node
			for _, e := range specyaml.Pairs(s.Value) {
				if (s.Key == "securitySchemes" && usedSchemes[e.Key]) || used[s.Key+"/"+e.Key] {
					keep = append(keep, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: e.Key}, e.Value)
				}
			}
			if len(keep) > 0 {
				s.Value.Content = keep
				sections = append(sections, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.Key}, s.Value)
			}
		}
		components.Content = sections
		if len(sections) == 0 {
			specyaml.Delete(root, "components")
		}
	}

	// Tags: only those an operation or webhook still uses.
	if tags := specyaml.Get(root, "tags"); tags != nil {
		tags.Content = slices.DeleteFunc(tags.Content, func(t *yaml.Node) bool {
			return !usedTags[specyaml.Scalar(specyaml.Get(t, "name"))]
		})
		if len(tags.Content) == 0 {
			specyaml.Delete(root, "tags")
		}
	}
	return out, nil
}

// referencedComponents returns "section/name" for every component reachable
// through $ref from roots. Only local references (#/components/...) are
// allowed: the spec is one self-contained file.
func referencedComponents(components *yaml.Node, roots []*yaml.Node) (map[string]bool, error) {
	used := map[string]bool{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, ref := range specyaml.Refs(n, nil) {
			section, entry, ok := specyaml.SplitComponentRef(ref)
			if !ok {
				return nil, fmt.Errorf("spec: reference %q is not a local component reference", ref)
			}
			if used[section+"/"+entry] {
				continue
			}
			target := specyaml.Path(components, section, entry)
			if target == nil {
				return nil, fmt.Errorf("spec: reference %q points nowhere", ref)
			}
			used[section+"/"+entry] = true
			queue = append(queue, target)
		}
	}
	return used, nil
}

func collectTags(op *yaml.Node, into map[string]bool) {
	for _, t := range specyaml.Strings(specyaml.Get(op, "tags")) {
		into[t] = true
	}
}

func collectSchemes(holder *yaml.Node, into map[string]bool) {
	if sec := specyaml.Get(holder, "security"); sec != nil {
		for _, req := range sec.Content {
			for _, p := range specyaml.Pairs(req) {
				into[p.Key] = true
			}
		}
	}
}

// Encode writes doc as YAML with two-space indentation after the given
// header comment lines.
func Encode(doc *yaml.Node, header string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
