package contractfuzz_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
)

// TestIssue12Examples replays each malformed request of issue 12 that a
// running server once answered with 500 or accepted, as Robin (the owner),
// and requires the answer the contract gives it now: a 4xx problem
// document with the code and the pointers of the defect, and no change.
func TestIssue12Examples(t *testing.T) {
	t.Parallel()
	e := newEdge(t, nil)
	w := e.w
	sub := e.subscriptionID(t)
	apps := "/api/v1/apps/"
	deliveries := "/api/v1/webhook-subscriptions/" + sub + "/deliveries"
	created := `{"url":"https://hooks.example.com/bothy/alex","event_types":["message.created"]}`
	subscriptions := apps + w.Tracker.ID.String() + "/webhook-subscriptions"
	messages := "/api/v1/channels/" + w.Eskalation.String() + "/messages"
	id := w.Tracker.ID.String()
	cases := []struct {
		name     string
		rq       request
		status   int
		code     errs.Code
		pointers []string
	}{
		{"a path ID that is not a UUID", request{method: "GET", target: apps + "not-a-uuid/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"a path ID of digits", request{method: "GET", target: apps + "12345/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"a path ID with an escaped NUL", request{method: "GET", target: apps + "%00/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"a path ID with an escaped slash", request{method: "GET", target: apps + "..%2F/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"a UUID with a trailing space", request{method: "GET", target: apps + id + "%20/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"a UUID in braces", request{method: "GET", target: apps + "%7B" + id + "%7D/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"a UUID as a URN", request{method: "GET", target: apps + "urn:uuid:" + id + "/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"a UUID without hyphens", request{method: "GET", target: apps + strings.ReplaceAll(id, "-", "") + "/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"a path ID of 10,000 characters", request{method: "GET", target: apps + strings.Repeat("a", 10000) + "/webhook-subscriptions"}, 400, errs.CodeValidationFailed, []string{"path/appId"}},
		{"limit that is not a number", request{method: "GET", target: deliveries + "?limit=abc"}, 400, errs.CodeValidationFailed, []string{"query/limit"}},
		{"limit with a fraction", request{method: "GET", target: deliveries + "?limit=1.5"}, 400, errs.CodeValidationFailed, []string{"query/limit"}},
		{"limit with an exponent", request{method: "GET", target: deliveries + "?limit=1e3"}, 400, errs.CodeValidationFailed, []string{"query/limit"}},
		{"limit of 2^64", request{method: "GET", target: deliveries + "?limit=18446744073709551616"}, 400, errs.CodeValidationFailed, []string{"query/limit"}},
		{"an empty limit", request{method: "GET", target: deliveries + "?limit="}, 400, errs.CodeValidationFailed, []string{"query/limit"}},
		{"limit given twice", request{method: "GET", target: deliveries + "?limit=1&limit=2"}, 400, errs.CodeValidationFailed, []string{"query/limit"}},
		{"status given twice", request{method: "GET", target: deliveries + "?status=pending&status=dead"}, 400, errs.CodeValidationFailed, []string{"query/status"}},
		{"a bad escape in the query", request{method: "GET", target: deliveries + "?limit=%zz"}, 400, errs.CodeValidationFailed, []string{"query"}},
		{"a NUL character in a message", request{method: "POST", target: messages, body: `{"text":"Hello\u0000Sam"}`}, 400, errs.CodeValidationFailed, []string{"/text"}},
		{"a JSON body followed by garbage", request{method: "POST", target: subscriptions, body: created + "xyz"}, 400, errs.CodeValidationFailed, []string{""}},
		{"a JSON body followed by a second document", request{method: "POST", target: subscriptions, body: created + created}, 400, errs.CodeValidationFailed, []string{""}},
		{"a gzip content coding on a plain body", request{method: "POST", target: subscriptions, body: created, header: http.Header{"Content-Encoding": {"gzip"}}}, 415, errs.CodeUnsupportedMediaType, nil},
		{"a url of 100 KiB", request{method: "POST", target: subscriptions, body: `{"url":"https://hooks.example.com/` + strings.Repeat("a", 100<<10) + `","event_types":["message.created"]}`}, 400, errs.CodeValidationFailed, []string{"/url"}},
	}
	before := e.snapshot(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { e.requireAnswer(t, w.Robin.Token, c.rq, c.status, c.code, c.pointers) })
	}
	require.Equal(t, before, e.snapshot(t), "no table changed")
}

// requireAnswer sends rq with token and requires a problem document of
// status and code with exactly the pointers (any when nil).
func (e *edge) requireAnswer(t *testing.T, token string, rq request, status int, code errs.Code, pointers []string) {
	t.Helper()
	{
		c := struct {
			name     string
			status   int
			code     errs.Code
			pointers []string
		}{t.Name(), status, code, pointers}
		a := e.do(t, token, rq)
		require.Equal(t, c.status, a.status, "%s: %s", c.name, a.body)
		require.NotNil(t, a.problem, c.name)
		require.Equal(t, c.code, a.problem.Code, c.name)
		var pointers []string
		for _, f := range a.problem.Errors {
			pointers = append(pointers, f.Pointer)
		}
		if c.pointers != nil {
			// Several items may point at one defect (a NUL is no UUID).
			require.Equal(t, c.pointers, slices.Compact(pointers), c.name)
		}
		require.NotEmpty(t, a.header.Get("X-Request-Id"), c.name)
	}
}
