package contractfuzz_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// variant is one malformed request derived from an operation's valid
// baseline: one defect in one place.
type variant struct {
	// where names the defect for failure messages and the log, for example
	// "query/limit: fraction".
	where string
	rq    request
	// pointer is where a validation_failed answer must point (an item with
	// this pointer or below it); "" when the defect has no single place.
	pointer string
	// legal marks a variant that the contract allows (U+2028 or a
	// right-to-left mark in free text): it must not answer 5xx, but it may
	// succeed and change rows, so it runs after the state comparison.
	legal bool
}

// baseline is the valid request of an operation the variants start from.
type baseline struct {
	op     *openapi3.Operation
	item   *openapi3.PathItem
	method string
	// path is the template with {name} wildcards; values the valid value of
	// each path parameter.
	path   string
	values map[string]string
	header http.Header
	body   map[string]any // nil without a request body
	schema *openapi3.Schema
}

// target renders the path with the path values, one replaced by raw (a
// value already escaped for the request line) when name is not empty.
func (b *baseline) target(name, raw string, query string) string {
	p := b.path
	for k, v := range b.values {
		if k == name {
			v = raw
		} else {
			v = url.PathEscape(v)
		}
		p = strings.ReplaceAll(p, "{"+k+"}", v)
	}
	if query != "" {
		p += "?" + query
	}
	return p
}

// request is the baseline with a raw query and body.
func (b *baseline) request(pathName, pathRaw, query string, body string) request {
	return request{method: b.method, target: b.target(pathName, pathRaw, query), header: b.header.Clone(), body: body}
}

// bodyJSON is the baseline body as JSON ("" without a body).
func (b *baseline) bodyJSON() string {
	if b.body == nil {
		return ""
	}
	raw, err := json.Marshal(b.body)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// pathVariants are the malformed values of a path parameter that carries
// an ID (every path parameter of the contract is a UUID), escaped for the
// request line.
func pathVariants(id string) map[string]string {
	return map[string]string{
		"not a uuid":          "not-a-uuid",
		"digits":              "12345",
		"escaped NUL":         "%00",
		"escaped slash":       "..%2F",
		"trailing space":      id + "%20",
		"braces":              "%7B" + id + "%7D",
		"urn":                 "urn:uuid:" + id,
		"no hyphens":          strings.ReplaceAll(id, "-", ""),
		"10,000 characters":   strings.Repeat("a", 10000),
		"upper case":          strings.ToUpper(id) + "x",
		"line separator":      "%E2%80%A8",
		"right-to-left mark":  "%E2%80%8F" + id,
		"lone surrogate":      "%ED%A0%80",
		"invalid UTF-8":       "%FF",
		"nil UUID with space": "%2000000000-0000-0000-0000-000000000000",
	}
}

// queryVariants are the malformed values of one query parameter, as raw
// query strings (name included).
func queryVariants(name string, s *openapi3.Schema, valid string) map[string]string {
	n := url.QueryEscape(name)
	out := map[string]string{
		"empty":          n + "=",
		"repeated":       n + "=" + url.QueryEscape(valid) + "&" + n + "=" + url.QueryEscape(valid),
		"NUL":            n + "=a%00b",
		"lone surrogate": n + "=%ED%A0%80",
		"invalid UTF-8":  n + "=%FF",
		"bad escape":     n + "=%zz",
	}
	switch {
	case s.Type.Is(openapi3.TypeInteger):
		out["not a number"] = n + "=abc"
		out["fraction"] = n + "=1.5"
		out["exponent"] = n + "=1e3"
		out["2^64"] = n + "=18446744073709551616"
		out["leading space"] = n + "=%201"
		out["negative"] = n + "=-1"
		if s.Min != nil {
			out["below minimum"] = fmt.Sprintf("%s=%d", n, int64(*s.Min)-1)
		}
	case len(s.Enum) > 0:
		out["not in enum"] = n + "=nope"
		out["line separator"] = n + "=%E2%80%A8"
		out["right-to-left mark"] = n + "=%E2%80%8F" + url.QueryEscape(valid)
	default:
		if s.MaxLength != nil {
			out["over-long"] = n + "=" + strings.Repeat("a", int(*s.MaxLength)+1)
		}
	}
	return out
}

// headerVariants are the malformed values of a header parameter.
func headerVariants(s *openapi3.Schema) map[string][]string {
	out := map[string][]string{
		"empty":             {""},
		"repeated":          {"alex-retry-1", "alex-retry-2"},
		"control character": {"alex\x01retry"},
		"non-ASCII":         {"alex-r\u00e9try"},
	}
	if s.MaxLength != nil {
		out["over-long"] = []string{strings.Repeat("a", int(*s.MaxLength)+1)}
	}
	return out
}

// raw is a JSON text put into a body as it is.
type raw = json.RawMessage

// fieldVariants are the malformed values of one body member with schema s.
// legal holds values the contract allows but that are Unicode edge cases.
func fieldVariants(s *openapi3.Schema) (bad map[string]any, legal map[string]any) {
	bad = map[string]any{"null": nil}
	legal = map[string]any{}
	switch {
	case s.Type.Is(openapi3.TypeString):
		bad["wrong type"] = 12345
		bad["object"] = map[string]any{}
		bad["NUL"] = raw(`"Sam\u0000"`)
		bad["lone surrogate"] = raw(`"Sam\ud800"`)
		bad["lone low surrogate"] = raw(`"\udc00Sam"`)
		if s.MaxLength != nil {
			bad["over-long"] = strings.Repeat("a", int(*s.MaxLength)+1)
		}
		if s.MinLength > 0 {
			bad["empty"] = ""
		}
		if len(s.Enum) > 0 {
			bad["not in enum"] = "nope"
			bad["line separator"] = "message\u2028created"
		}
		switch s.Format {
		case "uuid":
			bad["not a uuid"] = "not-a-uuid"
			bad["uuid with space"] = "01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e01 "
		case "email":
			bad["not an address"] = "robin at example.com"
			bad["display name"] = "Robin <robin@example.com>"
		case "uri":
			bad["relative"] = "/bothy/events"
			bad["not a URI"] = "http://[::1"
		case "date-time":
			bad["not a time"] = "yesterday"
		}
		if s.Pattern != "" {
			bad["off pattern"] = "\u202e!"
		}
		if len(s.Enum) == 0 && s.Format == "" && s.Pattern == "" {
			legal["line separator"] = "Hello\u2028Sam"
			legal["right-to-left mark"] = "\u200fSam"
			legal["emoji"] = "Alex \U0001F600"
		}
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		bad["string"] = "1"
		bad["fraction"] = raw(`1.5`)
		bad["huge"] = raw(`1e400`)
		if s.Min != nil {
			bad["below minimum"] = raw(fmt.Sprint(int64(*s.Min) - 1))
		}
		if s.Max != nil {
			bad["above maximum"] = raw(fmt.Sprint(int64(*s.Max) + 1))
		}
	case s.Type.Is(openapi3.TypeBoolean):
		bad["string"] = "true"
		bad["number"] = 1
	case s.Type.Is(openapi3.TypeArray):
		bad["object"] = map[string]any{}
		bad["string"] = "message.created"
		if s.MinItems > 0 {
			bad["empty"] = []any{}
		}
		if s.MaxItems != nil {
			many := make([]any, int(*s.MaxItems)+1)
			for i := range many {
				many[i] = sample(s.Items.Value, "")
			}
			bad["too many"] = many
		}
		if s.UniqueItems {
			v := sample(s.Items.Value, "")
			bad["repeated item"] = []any{v, v}
		}
		bad["item of wrong type"] = []any{raw(`{"x":[1]}`)}
	case s.Type.Is(openapi3.TypeObject):
		bad["array"] = []any{}
		bad["string"] = "x"
	}
	return bad, legal
}

// sample returns a valid value of s: the example, the first enum value, a
// value of the format, or the smallest value of the type. ids gives the
// values of uuid members by name.
func sample(s *openapi3.Schema, name string) any {
	if s.Example != nil {
		return s.Example
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	switch {
	case s.Type.Is(openapi3.TypeString):
		switch s.Format {
		case "uuid":
			return "01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e01"
		case "email":
			return "sam@example.com"
		case "uri":
			return "https://hooks.example.com/bothy/events"
		case "date-time":
			return "2026-11-30T09:00:00Z"
		}
		return "Alex"
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		if s.Min != nil {
			return int64(*s.Min)
		}
		return 1
	case s.Type.Is(openapi3.TypeBoolean):
		return false
	case s.Type.Is(openapi3.TypeArray):
		n := max(int(s.MinItems), 1)
		out := make([]any, 0, n)
		for range n {
			out = append(out, sample(s.Items.Value, ""))
		}
		if s.UniqueItems && n > 1 {
			return out[:1]
		}
		return out
	case s.Type.Is(openapi3.TypeObject):
		out := map[string]any{}
		for k, p := range s.Properties {
			out[k] = sample(p.Value, k)
		}
		return out
	}
	return nil
}

// member is one member of a body: its JSON pointer tokens and schema.
type member struct {
	path     []string
	schema   *openapi3.Schema
	required bool
}

// members lists the members of an object schema, depth first, to depth 3.
func members(s *openapi3.Schema, prefix []string, depth int) []member {
	if depth == 0 || s == nil {
		return nil
	}
	var out []member
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		p := s.Properties[k].Value
		path := append(slices.Clone(prefix), k)
		out = append(out, member{path: path, schema: p, required: slices.Contains(s.Required, k)})
		if p.Type.Is(openapi3.TypeObject) {
			out = append(out, members(p, path, depth-1)...)
		}
	}
	return out
}

// with returns a deep copy of body with the member at path set to v, or
// removed when remove is set.
func with(body map[string]any, path []string, v any, remove bool) map[string]any {
	out := map[string]any{}
	for k, x := range body {
		out[k] = x
	}
	if len(path) == 1 {
		if remove {
			delete(out, path[0])
		} else {
			out[path[0]] = v
		}
		return out
	}
	inner, _ := out[path[0]].(map[string]any)
	out[path[0]] = with(inner, path[1:], v, remove)
	return out
}

// encode marshals a body of the suite.
func encode(body map[string]any) string {
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return string(b)
}
