package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"bothy/tools/internal/specyaml"
)

// webhookPathPrefix is where Check mounts the x-webhooks entries in the copy
// of the document it loads with kin-openapi, so they are checked with the
// same code as paths.
const webhookPathPrefix = "/x-webhooks/"

// checker collects the problems of one document.
type checker struct {
	doc      *yaml.Node
	api      *openapi3.T
	problems []string
}

func (c *checker) addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// Check returns the convention problems of the spec, sorted. The error is
// set only when the spec cannot be read at all.
func Check(data []byte) ([]string, error) {
	doc, err := specyaml.Parse(data)
	if err != nil {
		return nil, err
	}
	api, err := loadWithWebhooks(doc)
	if err != nil {
		return nil, err
	}
	c := &checker{doc: doc, api: api}
	if err := api.Validate(context.Background(), openapi3.EnableMultiError()); err != nil {
		c.addf("spec: %v", err)
	}
	c.checkOperations()
	c.checkWebhookCoverage()
	c.checkProblemCodes()
	c.checkProblemResponses()
	c.checkSchemasUsed()
	c.checkNoNullable(specyaml.Root(doc))
	c.checkExamples()
	c.checkText(specyaml.Root(doc))
	slices.Sort(c.problems)
	return slices.Compact(c.problems), nil
}

// loadWithWebhooks loads the document with kin-openapi after copying every
// x-webhooks entry under paths (prefixed with webhookPathPrefix).
func loadWithWebhooks(doc *yaml.Node) (*openapi3.T, error) {
	cp := specyaml.DeepCopy(doc)
	root := specyaml.Root(cp)
	paths := specyaml.Get(root, "paths")
	if paths == nil {
		return nil, errors.New("spec: paths is missing")
	}
	for _, p := range specyaml.Pairs(specyaml.Get(root, specyaml.WebhooksKey)) {
		specyaml.Set(paths, webhookPathPrefix+p.Key, p.Value)
	}
	specyaml.Delete(root, specyaml.WebhooksKey)
	b, err := yaml.Marshal(cp)
	if err != nil {
		return nil, err
	}
	api, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return api, nil
}

// operation is one operation with where it lives.
type operation struct {
	name    string // "GET /apps" or "webhook message.created"
	path    string
	method  string
	webhook bool
	event   string
	item    *openapi3.PathItem
	op      *openapi3.Operation
}

func (c *checker) operations() []operation {
	var ops []operation
	for _, path := range c.api.Paths.InMatchingOrder() {
		item := c.api.Paths.Value(path)
		for _, m := range specyaml.HTTPMethods {
			op := item.GetOperation(strings.ToUpper(m))
			if op == nil {
				continue
			}
			o := operation{path: path, method: strings.ToUpper(m), item: item, op: op}
			if ev, ok := strings.CutPrefix(path, webhookPathPrefix); ok {
				o.webhook, o.event, o.name = true, ev, "webhook "+ev
			} else {
				o.name = o.method + " " + path
			}
			ops = append(ops, o)
		}
	}
	return ops
}

func extString(ext map[string]any, key string) (string, bool) {
	v, ok := ext[key]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

func (c *checker) checkOperations() {
	tags := map[string]bool{}
	for _, t := range c.api.Tags {
		tags[t.Name] = true
	}
	for _, o := range c.operations() {
		op := o.op
		if op.OperationID == "" {
			c.addf("%s: operationId is missing", o.name)
		}
		if len(op.Tags) == 0 {
			c.addf("%s: tags are missing", o.name)
		}
		for _, t := range op.Tags {
			if !tags[t] {
				c.addf("%s: tag %s is not declared under tags", o.name, t)
			}
		}
		if op.Summary == "" {
			c.addf("%s: summary is missing", o.name)
		}
		if op.Description == "" {
			c.addf("%s: description is missing", o.name)
		}
		if a, ok := extString(op.Extensions, "x-authz-action"); !ok || a == "" {
			c.addf("%s: x-authz-action is missing", o.name)
		}
		if o.webhook {
			c.checkWebhook(o)
		} else {
			c.checkPathOperation(o)
		}
	}
}

// params returns the path item and operation parameters of o.
func params(o operation) openapi3.Parameters {
	return append(slices.Clone(o.item.Parameters), o.op.Parameters...)
}

func (c *checker) checkPathOperation(o operation) {
	op := o.op
	if v, ok := op.Extensions["x-cors"]; ok {
		if _, isBool := v.(bool); !isBool {
			c.addf("%s: x-cors is not a boolean", o.name)
		}
	}
	if v, ok := op.Extensions["x-rate-limit-class"]; ok {
		if s, isString := v.(string); !isString || s == "" {
			c.addf("%s: x-rate-limit-class is not a name", o.name)
		}
	}
	security := op.Security
	if security == nil {
		security = &c.api.Security
	}
	authenticated := len(*security) > 0
	var pathIDs, idempotent bool
	for _, p := range params(o) {
		if p.Value.In == openapi3.ParameterInPath {
			pathIDs = true
		}
		if p.Value.In == openapi3.ParameterInHeader && strings.EqualFold(p.Value.Name, "Idempotency-Key") {
			idempotent = true
		}
	}
	responses := op.Responses.Map()
	success := false
	for code := range responses {
		if strings.HasPrefix(code, "2") {
			success = true
		}
	}
	if !success {
		c.addf("%s: no 2xx response", o.name)
	}
	need := func(code, why string) {
		if _, ok := responses[code]; !ok {
			c.addf("%s: response %s is missing (%s)", o.name, code, why)
		}
	}
	if authenticated {
		need("401", "authenticated operation")
		need("403", "authenticated operation")
	}
	if pathIDs {
		need("404", "path IDs")
	}
	if op.RequestBody != nil || len(params(o)) > 0 {
		need("400", "body or parameters")
	}
	if op.RequestBody != nil {
		need("413", "request body")
	}
	if idempotent {
		need("409", "Idempotency-Key")
	}
	if _, ok := op.Extensions["x-rate-limit-class"]; ok {
		need("429", "rate limit class")
	}
	for code, r := range responses {
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && r.Ref == "" {
			c.addf("%s: response %s is not a $ref to components/responses", o.name, code)
		}
	}
	if op.RequestBody != nil {
		body := op.RequestBody.Value
		for mt, m := range body.Content {
			if mt != "application/json" {
				c.addf("%s: request body media type %s is not application/json", o.name, mt)
				continue
			}
			if m.Schema == nil {
				c.addf("%s: request body has no schema", o.name)
				continue
			}
			c.checkClosed(o.name+" request body", m.Schema, map[*openapi3.Schema]bool{})
		}
	}
}

// checkClosed requires additionalProperties: false on every object schema
// of a request body, so unknown members answer 400.
func (c *checker) checkClosed(where string, ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	s := ref.Value
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0 {
		if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has || s.AdditionalProperties.Schema != nil {
			name := where
			if ref.Ref != "" {
				name += " " + ref.Ref
			}
			c.addf("%s: object schema without additionalProperties: false", name)
		}
	}
	for _, p := range s.Properties {
		c.checkClosed(where, p, seen)
	}
	if s.Items != nil {
		c.checkClosed(where, s.Items, seen)
	}
	for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range list {
			c.checkClosed(where, sub, seen)
		}
	}
}

var receivers = map[string]bool{"person": true, "app": true, "agent": true}

func (c *checker) checkWebhook(o operation) {
	op := o.op
	if a, _ := extString(op.Extensions, "x-authz-action"); a != "webhook_out.deliver" {
		c.addf("%s: x-authz-action is not webhook_out.deliver", o.name)
	}
	if a, ok := extString(op.Extensions, "x-receive-action"); !ok || a == "" {
		c.addf("%s: x-receive-action is missing", o.name)
	}
	list, _ := op.Extensions["x-receivers"].([]any)
	if len(list) == 0 {
		c.addf("%s: x-receivers is missing", o.name)
	}
	for _, r := range list {
		if s, ok := r.(string); !ok || !receivers[s] {
			c.addf("%s: x-receivers has %v, not person, app or agent", o.name, r)
		}
	}
	for _, name := range []string{"WebhookId", "WebhookTimestamp", "WebhookSignature"} {
		found := false
		for _, p := range params(o) {
			if p.Ref == "#/components/parameters/"+name {
				found = true
			}
		}
		if !found {
			c.addf("%s: parameter %s is missing", o.name, name)
		}
	}
	if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil ||
		op.RequestBody.Value.Content.Get("application/json").Schema.Ref != "#/components/schemas/EventEnvelope" {
		c.addf("%s: the body is not application/json EventEnvelope", o.name)
	} else {
		m := op.RequestBody.Value.Content.Get("application/json")
		if len(m.Examples) == 0 {
			c.addf("%s: no example delivery", o.name)
		}
		for name, ex := range m.Examples {
			v, _ := ex.Value.Value.(map[string]any)
			if v["type"] != o.event {
				c.addf("%s: example %s has another type", o.name, name)
			}
		}
	}
	var codes []string
	for code := range op.Responses.Map() {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	if !slices.Equal(codes, []string{"2XX", "410", "429"}) {
		c.addf("%s: responses are %v, want 2XX, 410 and 429", o.name, codes)
	}
}

// checkWebhookCoverage requires one x-webhooks entry per EventType value.
func (c *checker) checkWebhookCoverage() {
	et := c.api.Components.Schemas["EventType"]
	if et == nil {
		c.addf("schema EventType is missing")
		return
	}
	events := map[string]bool{}
	for _, o := range c.operations() {
		if o.webhook {
			events[o.event] = true
		}
	}
	enum := map[string]bool{}
	for _, v := range et.Value.Enum {
		s, _ := v.(string)
		enum[s] = true
		if !events[s] {
			c.addf("event type %s has no x-webhooks entry", s)
		}
	}
	for ev := range events {
		if !enum[ev] {
			c.addf("webhook %s is not an EventType", ev)
		}
	}
}

// checkProblemCodes requires x-problem-codes to describe exactly the
// ProblemCode enum, in its order, each with an error status and a
// description.
func (c *checker) checkProblemCodes() {
	pc := specyaml.Path(specyaml.Root(c.doc), "components", "schemas", "ProblemCode")
	if pc == nil {
		c.addf("schema ProblemCode is missing")
		return
	}
	enum := specyaml.Strings(specyaml.Get(pc, "enum"))
	var table []string
	for _, p := range specyaml.Pairs(specyaml.Get(pc, "x-problem-codes")) {
		table = append(table, p.Key)
		status, err := strconv.Atoi(specyaml.Scalar(specyaml.Get(p.Value, "status")))
		if err != nil || status < 400 || status > 599 {
			c.addf("problem code %s: status is not a 4xx or 5xx code", p.Key)
		}
		if specyaml.Scalar(specyaml.Get(p.Value, "description")) == "" {
			c.addf("problem code %s: description is missing", p.Key)
		}
		for _, r := range specyaml.Strings(specyaml.Get(p.Value, "reasons")) {
			if !codePattern.MatchString(r) {
				c.addf("problem code %s: reason %q is not snake case", p.Key, r)
			}
		}
	}
	if !slices.Equal(enum, table) {
		c.addf("ProblemCode: x-problem-codes %v differ from the enum %v", table, enum)
	}
}

var codePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// checkProblemResponses requires every response component with content to
// be a problem document.
func (c *checker) checkProblemResponses() {
	for name, r := range c.api.Components.Responses {
		for mt, m := range r.Value.Content {
			if mt != "application/problem+json" || m.Schema == nil || m.Schema.Ref != "#/components/schemas/Problem" {
				c.addf("response %s: content %s is not application/problem+json Problem", name, mt)
			}
		}
	}
}

// checkSchemasUsed requires every component schema to be reachable from an
// operation or webhook.
func (c *checker) checkSchemasUsed() {
	root := specyaml.Root(c.doc)
	used := map[string]bool{}
	queue := []*yaml.Node{specyaml.Get(root, "paths"), specyaml.Get(root, specyaml.WebhooksKey)}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, ref := range specyaml.Refs(n, nil) {
			section, name, ok := specyaml.SplitComponentRef(ref)
			if !ok || used[section+"/"+name] {
				continue
			}
			used[section+"/"+name] = true
			queue = append(queue, specyaml.Path(root, "components", section, name))
		}
	}
	for _, p := range specyaml.Pairs(specyaml.Path(root, "components", "schemas")) {
		if !used["schemas/"+p.Key] {
			c.addf("schema %s is not used", p.Key)
		}
	}
}

// checkNoNullable rejects nullable and the type null anywhere (ADR 0053).
func (c *checker) checkNoNullable(n *yaml.Node) {
	for _, p := range specyaml.Pairs(n) {
		if p.Key == "nullable" {
			c.addf("line %d: nullable is not allowed (no JSON null)", p.Value.Line)
		}
		if p.Key == "type" && (p.Value.Value == "null" || slices.Contains(specyaml.Strings(p.Value), "null")) {
			c.addf("line %d: type null is not allowed (no JSON null)", p.Value.Line)
		}
	}
	for _, child := range n.Content {
		c.checkNoNullable(child)
	}
}
