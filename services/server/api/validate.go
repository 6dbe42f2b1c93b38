package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"bothy/server/internal/kernel/errs"
)

// ValidatorOptions configures NewValidator.
type ValidatorOptions struct {
	// Spec is the OpenAPI 3.0 document (YAML or JSON) to validate against.
	// Nil means the embedded filtered spec (Spec), which is what the server
	// uses; tests pass the full contract or a spec of their own.
	Spec []byte
	// OnError writes the answer for a rejected request. It is required and
	// always receives an *errs.Error: validation_failed with Fields,
	// payload_too_large when the body exceeded the limit the chain set with
	// http.MaxBytesReader, or internal when the body could not be read. The
	// server passes the problem writer of platform/httpserver.
	OnError func(w http.ResponseWriter, r *http.Request, err error)
}

// Validator checks requests against the contract before any handler runs:
// path, query and header parameters and JSON bodies. It does not check
// credentials or security requirements: authentication and authorization
// belong to the HTTP chain. A Validator is safe for concurrent use.
type Validator struct {
	routes  []*route
	onError func(w http.ResponseWriter, r *http.Request, err error)
	options *openapi3filter.Options
	// lookup finds the route of a request (ParamError).
	lookup *http.ServeMux
}

// route describes one operation: its ServeMux pattern, the kin-openapi
// route and the names of its path and query parameters.
type route struct {
	pattern    string
	kin        *routers.Route
	pathParams []string
	query      map[string]bool
	// single holds the pointers ("query/limit", "header/Idempotency-Key")
	// of the query and header parameters that take one value, by location
	// and name (header names canonical).
	single map[[2]string]string
	// body tells whether the operation defines a request body.
	body bool
}

// NewValidator loads and validates the spec and prepares one route per
// operation. It fails with an internal *errs.Error when OnError is nil, when
// the spec does not load or validate, or when two operations have
// conflicting path patterns.
func NewValidator(opts ValidatorOptions) (*Validator, error) {
	if opts.OnError == nil {
		return nil, errs.Internalf("api: ValidatorOptions.OnError is required")
	}
	data := opts.Spec
	if data == nil {
		data = specYAML
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, errs.Wrap(err, "api: loading the spec")
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, errs.Wrap(err, "api: validating the spec")
	}
	base := ""
	if len(doc.Servers) > 0 {
		base = strings.TrimSuffix(doc.Servers[0].URL, "/")
	}
	v := &Validator{
		onError: opts.OnError,
		options: &openapi3filter.Options{
			MultiError:                        true,
			SkipSettingDefaults:               true,
			RejectWhenRequestBodyNotSpecified: true,
			SchemaValidationOptions: []openapi3.SchemaValidationOption{
				openapi3.DisableSchemaErrorDetails(),
				openapi3.WithStringFormatValidators(stringFormats),
			},
		},
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			// The validator's copy of the operation requires no security:
			// the server authenticates every request itself (httpserver),
			// and openapi3filter, even with a function that accepts all, read
			// and copied each request's body once per requirement to hand
			// it to the function.
			checked := *op
			checked.Security = &openapi3.SecurityRequirements{}
			rt := &route{
				pattern: method + " " + base + path,
				kin:     &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &checked},
				query:   map[string]bool{},
				single:  map[[2]string]string{},
				body:    op.RequestBody != nil,
			}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				name := p.Value.Name
				switch p.Value.In {
				case openapi3.ParameterInPath:
					rt.pathParams = append(rt.pathParams, name)
				case openapi3.ParameterInQuery:
					rt.query[name] = true
				case openapi3.ParameterInHeader:
					name = http.CanonicalHeaderKey(name)
				}
				if s := p.Value.Schema; s != nil && s.Value != nil && !s.Value.Type.Is(openapi3.TypeArray) {
					rt.single[[2]string{p.Value.In, name}] = p.Value.In + "/" + escapeToken(p.Value.Name)
				}
			}
			v.routes = append(v.routes, rt)
		}
	}
	slices.SortFunc(v.routes, func(a, b *route) int { return strings.Compare(a.pattern, b.pattern) })
	lookup, err := v.mux(http.NotFoundHandler())
	if err != nil {
		return nil, err
	}
	v.lookup = lookup
	return v, nil
}

// boundRoute is the ServeMux handler of one route for one next handler.
type boundRoute struct {
	*route
	v    *Validator
	next http.Handler
}

// mux registers one handler per operation on a private ServeMux, with the
// patterns the generated server uses, so matching follows Go's rules.
func (v *Validator) mux(next http.Handler) (mux *http.ServeMux, err error) {
	mux = http.NewServeMux()
	defer func() {
		// ServeMux panics on conflicting patterns; report it as an error.
		if p := recover(); p != nil {
			mux, err = nil, errs.Internalf("api: conflicting operation patterns: %v", p)
		}
	}()
	for _, rt := range v.routes {
		mux.Handle(rt.pattern, &boundRoute{route: rt, v: v, next: next})
	}
	return mux, nil
}

// Middleware returns a handler that validates each request of a known
// operation and calls next only when it is valid; otherwise OnError writes
// the answer. Requests that match no operation (unknown path or method) go
// to next unchanged, so the router answers them.
func (v *Validator) Middleware(next http.Handler) http.Handler {
	mux, err := v.mux(next)
	if err != nil {
		// NewValidator registered the same patterns without a conflict.
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, _ := mux.Handler(r); h != nil {
			if _, ok := h.(*boundRoute); ok {
				// Serve through the mux so that it fills r.PathValue.
				mux.ServeHTTP(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP validates r against the route's operation and calls next when
// it is valid.
func (b *boundRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	params := make(map[string]string, len(b.pathParams))
	for _, name := range b.pathParams {
		params[name] = r.PathValue(name)
	}
	input := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: params,
		Route:      b.kin,
		Options:    b.v.options,
	}
	// A bad percent escape drops the pair from the parsed query silently:
	// report it before anything reads the query.
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		b.v.onError(w, r, errs.Validation(field("query", codeInvalidEncoding)))
		return
	}
	fields := b.parameterFields(r, params)
	for name := range input.GetQueryParams() {
		if !b.query[name] {
			fields = append(fields, field("query/"+escapeToken(name), "unknown_parameter"))
		}
	}
	if b.body && r.Body != nil && r.Body != http.NoBody && strings.Contains(r.Header.Get("Content-Type"), "json") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				b.v.onError(w, r, errs.New(errs.CodePayloadTooLarge, "request body too large"))
				return
			}
			b.v.onError(w, r, errs.Wrap(err, "reading request body"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if len(body) > 0 { // a missing body is the schema's "required"
			fields = append(fields, checkDocument(body)...)
		}
	}
	if err := openapi3filter.ValidateRequest(r.Context(), input); err != nil {
		more, fatal := fieldErrors(err)
		if fatal != nil {
			b.v.onError(w, r, fatal)
			return
		}
		fields = append(fields, more...)
	}
	if len(fields) > 0 {
		b.v.onError(w, r, errs.Validation(normalise(fields)...))
		return
	}
	b.next.ServeHTTP(w, r)
}

// parameterFields reports what the schemas of the parameters cannot
// express: a single-valued query or header parameter given more than once
// (repeated), and a NUL character or an invalid UTF-8 sequence in a path,
// query or header parameter (invalid_character), which no column could
// store and no ID or cursor contains.
func (b *boundRoute) parameterFields(r *http.Request, path map[string]string) []errs.FieldError {
	var out []errs.FieldError
	check := func(pointer string, values []string) {
		for _, v := range values {
			if strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
				out = append(out, field(pointer, codeInvalidCharacter))
				return
			}
		}
	}
	for name, v := range path {
		check("path/"+escapeToken(name), []string{v})
	}
	for name, values := range r.URL.Query() {
		pointer, single := b.single[[2]string{openapi3.ParameterInQuery, name}]
		if !single && !b.query[name] {
			continue // unknown_parameter
		}
		if single && len(values) > 1 {
			out = append(out, field(pointer, codeRepeated))
		}
		check("query/"+escapeToken(name), values)
	}
	for key, pointer := range b.single {
		if key[0] != openapi3.ParameterInHeader {
			continue
		}
		values := r.Header.Values(key[1])
		if len(values) > 1 {
			out = append(out, field(pointer, codeRepeated))
		}
		check(pointer, values)
	}
	return out
}
