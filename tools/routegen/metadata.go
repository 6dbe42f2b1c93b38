package main

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"bothy/tools/internal/specyaml"
)

// OperationMeta is the row of the generated operation table for one
// enabled operation: what the HTTP chain and the register check need to
// know without parsing the spec at run time.
type OperationMeta struct {
	ID             string
	Handler        string
	Method         string
	Path           string
	Action         string
	RateLimitClass string
	CORS           bool
	Public         bool
	Idempotent     bool
}

// idempotencyHeader is the request header of docs/spec/06-api.md section 7.
const idempotencyHeader = "Idempotency-Key"

// Metadata extracts the table rows of ops from the spec, sorted by
// operationId. handlers maps operationId to the Go method name of the
// strict server interface.
func Metadata(doc *yaml.Node, ops []SpecOperation, handlers map[string]string) ([]OperationMeta, error) {
	rootSecurity := specyaml.Get(specyaml.Root(doc), "security")
	var rows []OperationMeta
	var problems []string
	for _, op := range ops {
		row := OperationMeta{
			ID:             op.ID,
			Handler:        handlers[op.ID],
			Method:         strings.ToUpper(op.Method),
			Path:           op.Path,
			Action:         specyaml.Scalar(specyaml.Get(op.Node, "x-authz-action")),
			RateLimitClass: specyaml.Scalar(specyaml.Get(op.Node, "x-rate-limit-class")),
		}
		if row.Handler == "" {
			problems = append(problems, op.ID+": no handler name from oapi-codegen")
		}
		if row.Action == "" {
			problems = append(problems, op.ID+": x-authz-action is missing")
		}
		if cors := specyaml.Get(op.Node, "x-cors"); cors != nil {
			if cors.Kind != yaml.ScalarNode || cors.Tag != "!!bool" {
				problems = append(problems, op.ID+": x-cors is not a boolean")
			} else {
				row.CORS = cors.Value == "true"
			}
		}
		sec := specyaml.Get(op.Node, "security")
		if sec == nil {
			sec = rootSecurity
		}
		row.Public = sec == nil || len(sec.Content) == 0
		for _, p := range append(slices.Clone(paramList(op.PathItem)), paramList(op.Node)...) {
			p = specyaml.Resolve(doc, p)
			if specyaml.Scalar(specyaml.Get(p, "in")) == "header" && strings.EqualFold(specyaml.Scalar(specyaml.Get(p, "name")), idempotencyHeader) {
				row.Idempotent = true
			}
		}
		rows = append(rows, row)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("spec: %s", strings.Join(problems, "; "))
	}
	slices.SortFunc(rows, func(a, b OperationMeta) int { return strings.Compare(a.ID, b.ID) })
	return rows, nil
}

func paramList(holder *yaml.Node) []*yaml.Node {
	if ps := specyaml.Get(holder, "parameters"); ps != nil {
		return ps.Content
	}
	return nil
}

// BasePath returns the path of the first server URL ("/api/v1"), or "" when
// the spec names no server.
func BasePath(doc *yaml.Node) (string, error) {
	servers := specyaml.Get(specyaml.Root(doc), "servers")
	if servers == nil || len(servers.Content) == 0 {
		return "", nil
	}
	u := specyaml.Scalar(specyaml.Get(servers.Content[0], "url"))
	if !strings.HasPrefix(u, "/") || strings.HasSuffix(u, "/") {
		return "", fmt.Errorf("spec: the first server URL %q is not a path like /api/v1", u)
	}
	return u, nil
}
