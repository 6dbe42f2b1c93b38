package api_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
)

// FuzzValidatorBody sends arbitrary bodies to createWebhookSubscription.
// Properties: the middleware never panics; it either lets the request
// through or reports an *errs.Error (validation_failed with at least one
// item, every item with a code, a constant detail and a pointer that is
// empty, a JSON pointer or a parameter location).
func FuzzValidatorBody(f *testing.F) {
	// Seeds: a valid body, each defect class of the table test, and JSON
	// edge cases (deep nesting, escapes, huge numbers, duplicate keys).
	for _, seed := range []string{
		validBody,
		`{"url":"https://hooks.example.com/a","event_types":["message.created"],"colour":"red"}`,
		`{"event_types":["message.created"]}`,
		`{"url":5,"event_types":[]}`,
		`{"url":"https://hooks.example.com/a","event_types":["message.created"],"enable_hmac":null}`,
		`[]`, `null`, `"x"`, `1e400`, `{"url":`,
		`{"a~b/c":{"d":[[[[[[[[]]]]]]]]}}`,
		`{"url":"https://hooks.example.com/\u00e9","event_types":["message.created","message.created"]}`,
		`{"url":"https://hooks.example.com/a","url":"https://hooks.example.com/b","event_types":["message.created"]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		_, o := serve(t, jsonRequest("POST", appPath, body))
		if o.reached {
			require.NoError(t, o.err)
			return
		}
		e, ok := errs.As(o.err)
		require.True(t, ok)
		require.Equal(t, errs.CodeValidationFailed, e.Code)
		require.NotEmpty(t, e.Fields)
		for _, fe := range e.Fields {
			require.NotEmpty(t, fe.Code)
			require.NotEmpty(t, fe.Detail)
			require.True(t, fe.Pointer == "" || strings.HasPrefix(fe.Pointer, "/") || strings.HasPrefix(fe.Pointer, "header/"), fe.Pointer)
		}
	})
}
