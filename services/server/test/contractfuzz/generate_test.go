package contractfuzz_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"bothy/server/api"
	"bothy/server/internal/platform/httpserver"
)

// variants returns the malformed variants of the baseline b, one defect
// each, and the legal Unicode edge cases of its free-text members.
func (e *edge) variants(b *baseline) []variant {
	var out []variant
	add := func(where string, rq request, legal bool) {
		// The pointer of a defect in one place is the place's name (the
		// part before ":", without the "body" prefix of body members); a
		// bad escape spoils the whole query. Legal edge cases and defects
		// of the whole body or request have no single place.
		pointer := ""
		switch i := strings.Index(where, ":"); {
		case legal, i < 0, strings.HasPrefix(where, "body:"), strings.HasPrefix(where, "query:"), strings.HasPrefix(where, "header/Content"):
		case strings.HasSuffix(where, ": bad escape"):
			pointer = "query"
		default:
			pointer = strings.TrimPrefix(where[:i], "body")
		}
		out = append(out, variant{where: where, rq: rq, legal: legal, pointer: pointer})
	}
	body := b.bodyJSON()
	params := append(slices.Clone(b.item.Parameters), b.op.Parameters...)
	for _, p := range params {
		pv := p.Value
		switch pv.In {
		case openapi3.ParameterInPath:
			for name, raw := range pathVariants(b.values[pv.Name]) {
				add("path/"+pv.Name+": "+name, b.request(pv.Name, raw, "", body), false)
			}
		case openapi3.ParameterInQuery:
			valid := sample(pv.Schema.Value, pv.Name)
			for name, q := range queryVariants(pv.Name, pv.Schema.Value, toString(valid)) {
				add("query/"+pv.Name+": "+name, b.request("", "", q, body), false)
			}
		case openapi3.ParameterInHeader:
			for name, values := range headerVariants(pv.Schema.Value) {
				rq := b.request("", "", "", body)
				rq.header[http.CanonicalHeaderKey(pv.Name)] = values
				add("header/"+pv.Name+": "+name, rq, false)
			}
		}
	}
	add("query: unknown parameter", b.request("", "", "zz_unknown=1", body), false)
	add("query: bad escape in a name", b.request("", "", "%zz=1", body), false)
	rq := b.request("", "", "", body)
	rq.header.Set("Content-Encoding", "gzip")
	add("header/Content-Encoding: gzip", rq, false)

	if b.schema == nil {
		add("body: on an operation without one", b.request("", "", "", `{}`), false)
		return out
	}
	limit := e.w.Services.Config.HTTP.MaxBodyBytes
	if e.bodyClass(b) == httpserver.BodyClassPublicAuth {
		limit = e.w.Services.Config.HTTP.MaxBodyBytesPublicAuth
	}
	whole := map[string]string{
		"not JSON":           `{"`,
		"null":               `null`,
		"array":              `[]`,
		"string":             `"Alex"`,
		"huge number":        `1e400`,
		"trailing garbage":   body + `xyz`,
		"second document":    body + body,
		"invalid UTF-8":      "{\"\xff\":1," + body[1:],
		"duplicate member":   duplicateFirst(body),
		"unknown member":     `{"zz_unknown":1,` + body[1:],
		"deep nesting":       strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		"over the limit":     `{"zz":"` + strings.Repeat("a", int(limit)) + `"}`,
		"NUL in a name":      `{"zz\u0000":1,` + body[1:],
		"lone surrogate key": `{"\ud800":1,` + body[1:],
	}
	if b.op.RequestBody.Value.Required {
		whole["empty"] = ""
	}
	for name, text := range whole {
		rq := b.request("", "", "", text)
		if text == "" {
			rq.header.Set("Content-Type", "application/json")
		}
		add("body: "+name, rq, false)
	}
	rq = b.request("", "", "", body)
	rq.header.Set("Content-Type", "text/plain")
	add("body: text/plain", rq, false)

	for _, m := range members(b.schema, nil, 3) {
		pointer := "/" + strings.Join(m.path, "/")
		bad, legal := fieldVariants(m.schema)
		for name, v := range bad {
			add("body"+pointer+": "+name, b.request("", "", "", encode(with(b.body, m.path, v, false))), false)
		}
		for name, v := range legal {
			add("body"+pointer+": "+name, b.request("", "", "", encode(with(b.body, m.path, v, false))), true)
		}
		if m.required {
			add("body"+pointer+": missing", b.request("", "", "", encode(with(b.body, m.path, nil, true))), false)
		}
		if m.schema.Type.Is(openapi3.TypeObject) {
			inner, _ := sample(m.schema, "").(map[string]any)
			inner["zz_unknown"] = 1
			add("body"+pointer+": unknown member", b.request("", "", "", encode(with(b.body, m.path, inner, false))), false)
		}
	}
	return out
}

// bodyClass is the body class the server gives b's operation (api.Mount
// puts the rate limit class public_auth into the body class of that name).
func (e *edge) bodyClass(b *baseline) httpserver.BodyClass {
	for _, op := range api.Operations() {
		if op.ID == b.op.OperationID && httpserver.RateClass(op.RateLimitClass) == httpserver.RateClassPublicAuth {
			return httpserver.BodyClassPublicAuth
		}
	}
	return ""
}

// duplicateFirst repeats the first member of a JSON object text.
func duplicateFirst(body string) string {
	end := strings.Index(body, ",")
	if end < 0 {
		end = len(body) - 1
	}
	return body[:end] + "," + body[1:]
}

// toString renders a sample value for a query string.
func toString(v any) string { return fmt.Sprint(v) }
