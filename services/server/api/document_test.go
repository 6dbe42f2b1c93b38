package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/kernel/errs"
)

// TestValidatorRefusesWhatTheSchemaCannotSee covers the checks of issue 12
// beside the schema: one I-JSON document per body, characters PostgreSQL
// can store, and one value per single-valued parameter.
func TestValidatorRefusesWhatTheSchemaCannotSee(t *testing.T) {
	t.Parallel()
	const ok = `{"url":"https://hooks.example.com/a","event_types":["message.created"]}`
	withHeader := func(r *http.Request, k string, v ...string) *http.Request {
		r.Header[k] = v
		return r
	}
	cases := []struct {
		name string
		req  *http.Request
		want []errs.FieldError
	}{
		{"garbage after the document", jsonRequest("POST", appPath, ok+"xyz"), []errs.FieldError{{Pointer: "", Code: "trailing_data"}}},
		{"a second document", jsonRequest("POST", appPath, ok+" "+ok), []errs.FieldError{{Pointer: "", Code: "trailing_data"}}},
		{"a member given twice", jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","url":"https://hooks.example.com/b","event_types":["message.created"]}`),
			[]errs.FieldError{{Pointer: "/url", Code: "duplicate_member"}}},
		{"a member name with ~ and / given twice, and a NUL deep inside", jsonRequest("POST", appPath,
			`{"url":"https://hooks.example.com/a","event_types":["message.created"],"a~b/c":1,"a~b/c":[{"d":"x"},{"d":"\u0000"}]}`),
			[]errs.FieldError{{Pointer: "/a~0b~1c", Code: "duplicate_member"}, {Pointer: "/a~0b~1c", Code: "unknown_member"},
				{Pointer: "/a~0b~1c/1/d", Code: "invalid_character"}}},
		{"a NUL character in a string", jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a\u0000","event_types":["message.created"]}`),
			[]errs.FieldError{{Pointer: "/url", Code: "format"}, {Pointer: "/url", Code: "invalid_character"}}},
		{"a lone high surrogate in a list item", jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","event_types":["message.created","\ud800"]}`),
			[]errs.FieldError{{Pointer: "/event_types/1", Code: "enum"}, {Pointer: "/event_types/1", Code: "invalid_character"}}},
		{"a lone low surrogate in a member name", jsonRequest("POST", appPath, `{"url":"https://hooks.example.com/a","event_types":["message.created"],"\udc00":1}`),
			[]errs.FieldError{{Pointer: "/\ufffd", Code: "invalid_character"}, {Pointer: "/\ufffd", Code: "unknown_member"}}},
		{"invalid UTF-8 in the body", jsonRequest("POST", appPath, "{\"url\":\"https://hooks.example.com/\xff\",\"event_types\":[\"message.created\"]}"),
			[]errs.FieldError{{Pointer: "", Code: "invalid_json"}}},
		{"limit given twice", jsonRequest("GET", deliPath+"?limit=1&limit=2", ""), []errs.FieldError{{Pointer: "query/limit", Code: "repeated"}}},
		{"a NUL in a query parameter", jsonRequest("GET", deliPath+"?cursor=a%00b", ""), []errs.FieldError{{Pointer: "query/cursor", Code: "invalid_character"}}},
		{"a bad escape in the query", jsonRequest("GET", deliPath+"?limit=%zz", ""), []errs.FieldError{{Pointer: "query", Code: "invalid_encoding"}}},
		{"Idempotency-Key given twice", withHeader(jsonRequest("POST", appPath, ok), "Idempotency-Key", "a", "b"),
			[]errs.FieldError{{Pointer: "header/Idempotency-Key", Code: "repeated"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, o := serve(t, tc.req)
			require.False(t, o.reached, "the handler must not run")
			e, ok := errs.As(o.err)
			require.True(t, ok)
			require.Equal(t, errs.CodeValidationFailed, e.Code)
			got := make([]errs.FieldError, len(e.Fields))
			for i, f := range e.Fields {
				require.NotEmpty(t, f.Detail)
				got[i] = errs.FieldError{Pointer: f.Pointer, Code: f.Code}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestValidatorKeepsPairedSurrogatesAndEscapes lets a valid surrogate
// pair, escaped backslashes and U+FFFD itself through.
func TestValidatorKeepsPairedSurrogatesAndEscapes(t *testing.T) {
	t.Parallel()
	for _, url := range []string{`https://hooks.example.com/\ud83d\ude00`, `https://hooks.example.com/\\ud800`, `https://hooks.example.com/\ufffd`} {
		_, o := serve(t, jsonRequest("POST", appPath, `{"url":"`+url+`","event_types":["message.created"]}`))
		require.True(t, o.reached, url)
	}
}

// TestParamErrorMapsEveryBindingError requires that each parameter error
// of the generated server becomes validation_failed with the validator's
// pointer, and that other errors pass unchanged.
func TestParamErrorMapsEveryBindingError(t *testing.T) {
	t.Parallel()
	v, err := api.NewValidator(api.ValidatorOptions{Spec: contract(t), OnError: func(http.ResponseWriter, *http.Request, error) {}})
	require.NoError(t, err)
	r := jsonRequest("GET", deliPath, "")
	cases := []struct {
		err     error
		pointer string
		code    string
	}{
		{&api.InvalidParamFormatError{ParamName: "subscriptionId"}, "path/subscriptionId", "type"},
		{&api.InvalidParamFormatError{ParamName: "limit"}, "query/limit", "type"},
		{&api.UnmarshalingParamError{ParamName: "status"}, "query/status", "type"},
		{&api.RequiredParamError{ParamName: "limit"}, "query/limit", "required"},
		{&api.RequiredHeaderError{ParamName: "Idempotency-Key"}, "header/Idempotency-Key", "required"},
		{&api.TooManyValuesForParamError{ParamName: "limit", Count: 2}, "query/limit", "repeated"},
		{&api.UnescapedCookieParamError{ParamName: "c"}, "cookie/c", "invalid"},
	}
	for _, tc := range cases {
		e, ok := errs.As(v.ParamError(r, tc.err))
		require.True(t, ok, "%T", tc.err)
		require.Equal(t, errs.CodeValidationFailed, e.Code)
		require.Len(t, e.Fields, 1)
		require.Equal(t, tc.pointer, e.Fields[0].Pointer, "%T", tc.err)
		require.Equal(t, tc.code, e.Fields[0].Code, "%T", tc.err)
	}
	other := errs.NotFound()
	require.Same(t, other, v.ParamError(r, other))
}
