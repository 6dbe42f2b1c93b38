package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/kernel/errs"
)

// contract is the full HTTP contract, so these tests exercise the real
// schemas rather than a copy.
func contract(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../api/openapi.yaml")
	require.NoError(t, err)
	return b
}

// outcome records what the middleware did with one request.
type outcome struct {
	reached bool
	err     error
}

type outcomeKey struct{}

// sharedValidator is built once from the full contract: loading and
// validating the spec is the expensive part, and a Validator is safe for
// concurrent use. OnError and the handler report into the outcome carried
// by each request's context.
var sharedValidator = sync.OnceValues(func() (http.Handler, error) {
	spec, err := os.ReadFile("../../../api/openapi.yaml")
	if err != nil {
		return nil, err
	}
	v, err := api.NewValidator(api.ValidatorOptions{
		Spec: spec,
		OnError: func(w http.ResponseWriter, r *http.Request, err error) {
			r.Context().Value(outcomeKey{}).(*outcome).err = err
			w.WriteHeader(http.StatusBadRequest)
		},
	})
	if err != nil {
		return nil, err
	}
	return v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Context().Value(outcomeKey{}).(*outcome).reached = true
		w.WriteHeader(http.StatusNoContent)
	})), nil
})

// serve runs r through the shared validator and returns the recorder and
// what happened.
func serve(t *testing.T, r *http.Request) (*httptest.ResponseRecorder, *outcome) {
	t.Helper()
	h, err := sharedValidator()
	require.NoError(t, err)
	o := &outcome{}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), outcomeKey{}, o)))
	return rec, o
}

const (
	appPath   = "/api/v1/apps/01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e01/webhook-subscriptions"
	subPath   = "/api/v1/webhook-subscriptions/01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e02"
	deliPath  = subPath + "/deliveries"
	validBody = `{"url":"https://hooks.example.com/bothy/events","event_types":["message.created"],"enable_hmac":true}`
)

func jsonRequest(method, path, body string) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestValidatorRejectsDefectsWithPointersAndItemCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func() *http.Request
		want []errs.FieldError
	}{
		{
			name: "an unknown member is named by its pointer",
			req: func() *http.Request {
				return jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","event_types":["message.created"],"colour":"red"}`)
			},
			want: []errs.FieldError{{Pointer: "/colour", Code: "unknown_member"}},
		},
		{
			name: "every unknown member is listed once",
			req: func() *http.Request {
				return jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","event_types":["message.created"],"b":1,"a/b":2}`)
			},
			want: []errs.FieldError{{Pointer: "/a~1b", Code: "unknown_member"}, {Pointer: "/b", Code: "unknown_member"}},
		},
		{
			name: "a missing required member points at the member",
			req:  func() *http.Request { return jsonRequest("POST", appPath, `{"event_types":["message.created"]}`) },
			want: []errs.FieldError{{Pointer: "/url", Code: "required"}},
		},
		{
			name: "an unknown event type points at its index",
			req: func() *http.Request {
				return jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","event_types":["message.created","nope"]}`)
			},
			want: []errs.FieldError{{Pointer: "/event_types/1", Code: "enum"}},
		},
		{
			name: "an empty list is too short",
			req: func() *http.Request {
				return jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","event_types":[]}`)
			},
			want: []errs.FieldError{{Pointer: "/event_types", Code: "min_items"}},
		},
		{
			name: "a repeated event type breaks uniqueness",
			req: func() *http.Request {
				return jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","event_types":["message.created","message.created"]}`)
			},
			want: []errs.FieldError{{Pointer: "/event_types", Code: "unique_items"}},
		},
		{
			name: "a number where a string belongs is a type error",
			req: func() *http.Request {
				return jsonRequest("POST", appPath, `{"url":5,"event_types":["message.created"]}`)
			},
			want: []errs.FieldError{{Pointer: "/url", Code: "type"}},
		},
		{
			name: "a relative address is not a uri",
			req: func() *http.Request {
				return jsonRequest("POST", appPath, `{"url":"hooks","event_types":["message.created"]}`)
			},
			want: []errs.FieldError{{Pointer: "/url", Code: "format"}},
		},
		{
			name: "null is never accepted",
			req: func() *http.Request {
				return jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","event_types":["message.created"],"enable_hmac":null}`)
			},
			want: []errs.FieldError{{Pointer: "/enable_hmac", Code: "type"}},
		},
		{
			name: "several defects are all reported, ordered by pointer",
			req:  func() *http.Request { return jsonRequest("POST", appPath, `{"url":7,"event_types":["x"],"zz":true}`) },
			want: []errs.FieldError{
				{Pointer: "/event_types/0", Code: "enum"},
				{Pointer: "/url", Code: "type"},
				{Pointer: "/zz", Code: "unknown_member"},
			},
		},
		{
			name: "a body that is not an object is a type error of the whole body",
			req:  func() *http.Request { return jsonRequest("POST", appPath, `["https://hooks.example.com/a"]`) },
			want: []errs.FieldError{{Pointer: "", Code: "type"}},
		},
		{
			name: "a body that is not JSON is named as such",
			req:  func() *http.Request { return jsonRequest("POST", appPath, `{"url":`) },
			want: []errs.FieldError{{Pointer: "", Code: "invalid_json"}},
		},
		{
			name: "a missing body is required",
			req:  func() *http.Request { return jsonRequest("POST", appPath, ``) },
			want: []errs.FieldError{{Pointer: "", Code: "required"}},
		},
		{
			name: "a body of another media type is refused",
			req: func() *http.Request {
				r := jsonRequest("POST", appPath, validBody)
				r.Header.Set("Content-Type", "text/plain")
				return r
			},
			want: []errs.FieldError{{Pointer: "header/Content-Type", Code: "media_type"}},
		},
		{
			name: "a path id that is not a UUID is a format error",
			req: func() *http.Request {
				return jsonRequest("POST", "/api/v1/apps/tracker/webhook-subscriptions", validBody)
			},
			want: []errs.FieldError{{Pointer: "path/appId", Code: "format"}},
		},
		{
			name: "an empty Idempotency-Key is too short",
			req: func() *http.Request {
				r := jsonRequest("POST", appPath, validBody)
				r.Header["Idempotency-Key"] = []string{""}
				return r
			},
			want: []errs.FieldError{{Pointer: "header/Idempotency-Key", Code: "min_length"}},
		},
		{
			name: "an unknown status filter is not in the enum",
			req:  func() *http.Request { return httptest.NewRequest("GET", deliPath+"?status=lost", nil) },
			want: []errs.FieldError{{Pointer: "query/status", Code: "enum"}},
		},
		{
			name: "a limit below one is below the minimum",
			req:  func() *http.Request { return httptest.NewRequest("GET", deliPath+"?limit=0", nil) },
			want: []errs.FieldError{{Pointer: "query/limit", Code: "minimum"}},
		},
		{
			name: "a limit that is not a number is a type error",
			req:  func() *http.Request { return httptest.NewRequest("GET", deliPath+"?limit=ten", nil) },
			want: []errs.FieldError{{Pointer: "query/limit", Code: "type"}},
		},
		{
			name: "an unknown query parameter is refused",
			req:  func() *http.Request { return httptest.NewRequest("GET", deliPath+"?colour=red", nil) },
			want: []errs.FieldError{{Pointer: "query/colour", Code: "unknown_parameter"}},
		},
		{
			name: "a body where the operation takes none is refused",
			req:  func() *http.Request { return jsonRequest("DELETE", subPath, `{}`) },
			want: []errs.FieldError{{Pointer: "", Code: "body_not_allowed"}},
		},
		{
			name: "an unknown member of a PATCH body is refused",
			req:  func() *http.Request { return jsonRequest("PATCH", subPath, `{"state":"paused","rotate":true}`) },
			want: []errs.FieldError{{Pointer: "/rotate", Code: "unknown_member"}},
		},
		{
			name: "a state outside the update enum is refused",
			req:  func() *http.Request { return jsonRequest("PATCH", subPath, `{"state":"disabled"}`) },
			want: []errs.FieldError{{Pointer: "/state", Code: "enum"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, o := serve(t, tc.req())
			require.False(t, o.reached, "the handler must not run")
			require.Equal(t, http.StatusBadRequest, rec.Code)
			e, ok := errs.As(o.err)
			require.True(t, ok, "OnError gets an *errs.Error")
			require.Equal(t, errs.CodeValidationFailed, e.Code)
			got := make([]errs.FieldError, len(e.Fields))
			for i, f := range e.Fields {
				require.NotEmpty(t, f.Detail, "every item carries a constant detail")
				got[i] = errs.FieldError{Pointer: f.Pointer, Code: f.Code}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestValidatorLetsValidRequestsThrough(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  func() *http.Request
	}{
		{"a valid create body", func() *http.Request { return jsonRequest("POST", appPath, validBody) }},
		{"a media type with parameters", func() *http.Request {
			r := jsonRequest("POST", appPath, validBody)
			r.Header.Set("Content-Type", "application/json; charset=utf-8")
			return r
		}},
		{"an Idempotency-Key", func() *http.Request {
			r := jsonRequest("POST", appPath, validBody)
			r.Header.Set("Idempotency-Key", "alex-retry-1")
			return r
		}},
		{"an empty update body", func() *http.Request { return jsonRequest("PATCH", subPath, `{}`) }},
		{"a list with every query parameter", func() *http.Request {
			return httptest.NewRequest("GET", deliPath+"?status=dead&limit=10&cursor=EXAMPLEcursor0001", nil)
		}},
		{"a delete without body", func() *http.Request { return httptest.NewRequest("DELETE", subPath, nil) }},
		{"no credentials: authentication is the chain's job", func() *http.Request {
			return httptest.NewRequest("GET", "/api/v1/me", nil)
		}},
		{"an unknown path passes to the router", func() *http.Request {
			return httptest.NewRequest("GET", "/api/v1/nowhere", nil)
		}},
		{"an unknown method passes to the router", func() *http.Request {
			return httptest.NewRequest("PUT", subPath, strings.NewReader("x"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, o := serve(t, tc.req())
			require.NoError(t, o.err)
			require.True(t, o.reached)
			require.Equal(t, http.StatusNoContent, rec.Code)
		})
	}
}

func TestValidatorKeepsTheBodyForTheHandler(t *testing.T) {
	t.Parallel()
	v, err := api.NewValidator(api.ValidatorOptions{Spec: contract(t), OnError: func(http.ResponseWriter, *http.Request, error) {
		t.Error("a valid request was rejected")
	}})
	require.NoError(t, err)
	var body string
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, err := io.Copy(b, r.Body)
		require.NoError(t, err)
		body = b.String()
	}))
	h.ServeHTTP(httptest.NewRecorder(), jsonRequest("POST", appPath, validBody))
	require.Equal(t, validBody, body)
}

func TestValidatorMapsAnOversizedBodyToPayloadTooLarge(t *testing.T) {
	t.Parallel()
	r := jsonRequest("POST", appPath, validBody)
	// The chain limits bodies with http.MaxBytesReader before validation.
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 8)
	_, o := serve(t, r)
	require.False(t, o.reached)
	require.Equal(t, errs.CodePayloadTooLarge, errs.CodeOf(o.err))
}

func TestValidatorErrorsCarryNoInput(t *testing.T) {
	t.Parallel()
	secret := "whsec_EXAMPLEc2VjcmV0b2Z0aGVzdWJzY3JpcHRpb24xAAAA="
	_, o := serve(t, jsonRequest("POST", appPath, `{"url":"`+secret+`","event_types":["`+secret+`"],"`+secret+`x":1}`))
	e, ok := errs.As(o.err)
	require.True(t, ok)
	require.NotContains(t, e.Error(), secret)
	for _, f := range e.Fields {
		require.NotContains(t, f.Detail, secret)
		require.NotContains(t, f.Code, secret)
	}
}

func TestNewValidatorNeedsOnError(t *testing.T) {
	t.Parallel()
	_, err := api.NewValidator(api.ValidatorOptions{Spec: contract(t)})
	require.Error(t, err)
}

func TestNewValidatorRefusesABrokenSpec(t *testing.T) {
	t.Parallel()
	_, err := api.NewValidator(api.ValidatorOptions{
		Spec:    []byte("openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      responses: {'200': {$ref: '#/components/responses/Missing'}}\n"),
		OnError: func(http.ResponseWriter, *http.Request, error) {},
	})
	require.Error(t, err)
}

func TestNewValidatorUsesTheEmbeddedSpecByDefault(t *testing.T) {
	t.Parallel()
	v, err := api.NewValidator(api.ValidatorOptions{OnError: func(http.ResponseWriter, *http.Request, error) {}})
	require.NoError(t, err)
	require.NotNil(t, v)
}
