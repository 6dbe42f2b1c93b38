package main

import (
	"errors"
	"net/mail"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"bothy/tools/internal/specyaml"
)

// uuidPattern is the canonical UUID form the server accepts (ids.Parse).
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// exampleOptions validate examples with the string formats the server's
// request validator checks (services/server/api/fielderrors.go).
var exampleOptions = []openapi3.SchemaValidationOption{
	openapi3.MultiErrors(),
	openapi3.WithStringFormatValidators(map[string]openapi3.StringFormatValidator{
		"uuid": openapi3.NewRegexpFormatValidator(uuidPattern.String()),
		"email": openapi3.NewCallbackValidator(func(s string) error {
			a, err := mail.ParseAddress(s)
			if err == nil && a.Address != s {
				err = errors.New("not a bare address")
			}
			return err
		}),
		"uri": openapi3.NewCallbackValidator(func(s string) error {
			u, err := url.Parse(s)
			if err == nil && !u.IsAbs() {
				err = errors.New("not an absolute URI")
			}
			return err
		}),
		"uri-reference": openapi3.NewCallbackValidator(func(s string) error {
			_, err := url.Parse(s)
			return err
		}),
	}),
}

// checkExamples validates every example of the document against its
// schema: schema examples, parameter and header examples, and the examples
// of request and response media types.
func (c *checker) checkExamples() {
	seen := map[*openapi3.Schema]bool{}
	var walkSchema func(where string, ref *openapi3.SchemaRef)
	walkSchema = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		if _, name, ok := specyaml.SplitComponentRef(ref.Ref); ok {
			// Name a component by itself, wherever it is reached first.
			where = "schema " + name
		}
		s := ref.Value
		seen[s] = true
		if s.Example != nil {
			c.validate(where+" example", s, s.Example)
		}
		for _, name := range sortedKeys(s.Properties) {
			walkSchema(where+"/"+name, s.Properties[name])
		}
		walkSchema(where+"/items", s.Items)
		for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range list {
				walkSchema(where, sub)
			}
		}
		if s.AdditionalProperties.Schema != nil {
			walkSchema(where+"/additionalProperties", s.AdditionalProperties.Schema)
		}
	}
	for _, name := range sortedKeys(c.api.Components.Schemas) {
		walkSchema("schema "+name, c.api.Components.Schemas[name])
	}
	param := func(where string, p *openapi3.Parameter) {
		if p.Schema == nil {
			return
		}
		walkSchema(where, p.Schema)
		if p.Example != nil {
			c.validate(where+" example", p.Schema.Value, p.Example)
		}
		for _, n := range sortedKeys(p.Examples) {
			c.validate(where+" example "+n, p.Schema.Value, p.Examples[n].Value.Value)
		}
	}
	header := func(where string, h *openapi3.Header) {
		param(where, &h.Parameter)
	}
	media := func(where string, content openapi3.Content) {
		for _, mt := range sortedKeys(content) {
			m := content[mt]
			if m.Schema == nil {
				continue
			}
			walkSchema(where+" "+mt, m.Schema)
			if m.Example != nil {
				c.validate(where+" "+mt+" example", m.Schema.Value, m.Example)
			}
			for _, n := range sortedKeys(m.Examples) {
				c.validate(where+" "+mt+" example "+n, m.Schema.Value, m.Examples[n].Value.Value)
			}
		}
	}
	for _, name := range sortedKeys(c.api.Components.Parameters) {
		param("parameter "+name, c.api.Components.Parameters[name].Value)
	}
	for _, name := range sortedKeys(c.api.Components.Headers) {
		header("header "+name, c.api.Components.Headers[name].Value)
	}
	for _, name := range sortedKeys(c.api.Components.Responses) {
		media("response "+name, c.api.Components.Responses[name].Value.Content)
	}
	for _, o := range c.operations() {
		for _, p := range params(o) {
			if p.Ref == "" {
				param(o.name+" parameter "+p.Value.Name, p.Value)
			}
		}
		if o.op.RequestBody != nil && o.op.RequestBody.Ref == "" {
			media(o.name+" request", o.op.RequestBody.Value.Content)
		}
		for _, code := range sortedKeys(o.op.Responses.Map()) {
			r := o.op.Responses.Value(code)
			if r.Ref != "" {
				continue
			}
			media(o.name+" response "+code, r.Value.Content)
			for _, h := range sortedKeys(r.Value.Headers) {
				if hr := r.Value.Headers[h]; hr.Ref == "" {
					header(o.name+" response "+code+" header "+h, hr.Value)
				}
			}
		}
	}
}

// validate checks one example value against schema.
func (c *checker) validate(where string, schema *openapi3.Schema, value any) {
	if err := schema.VisitJSON(value, exampleOptions...); err != nil {
		var reasons []string
		var walk func(error)
		walk = func(err error) {
			var me openapi3.MultiError
			if errors.As(err, &me) {
				for _, e := range me {
					walk(e)
				}
				return
			}
			var se *openapi3.SchemaError
			if errors.As(err, &se) {
				reasons = append(reasons, "/"+strings.Join(se.JSONPointer(), "/")+": "+se.Reason)
				return
			}
			reasons = append(reasons, err.Error())
		}
		walk(err)
		c.addf("%s does not validate: %s", where, strings.Join(reasons, "; "))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var (
	emailPattern = regexp.MustCompile(`[A-Za-z0-9._%+-]+@([A-Za-z0-9.-]+\.[A-Za-z]{2,})`)
	urlPattern   = regexp.MustCompile(`[a-z][a-z0-9+.-]*://([^/\s'"<>)]+)`)
)

// allowedHost reports whether host is example.com or below it.
func allowedHost(host string) bool {
	host = strings.ToLower(host)
	if i := strings.LastIndex(host, ":"); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	return host == "example.com" || strings.HasSuffix(host, ".example.com")
}

// checkText scans every scalar: hosts and addresses must be of example.com
// (white label) and no text may contain an en or em dash.
func (c *checker) checkText(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		for _, m := range urlPattern.FindAllStringSubmatch(n.Value, -1) {
			if !allowedHost(m[1]) {
				c.addf("line %d: host %s is not under example.com", n.Line, m[1])
			}
		}
		for _, m := range emailPattern.FindAllStringSubmatch(n.Value, -1) {
			if !allowedHost(m[1]) {
				c.addf("line %d: address domain %s is not example.com", n.Line, m[1])
			}
		}
		if strings.ContainsAny(n.Value, "\u2013\u2014") {
			c.addf("line %d: en or em dash", n.Line)
		}
	}
	for _, child := range n.Content {
		c.checkText(child)
	}
}
