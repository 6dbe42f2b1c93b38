package contractfuzz_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"bothy/server/api"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/httpserver"
)

// fixture is what the suite needs beyond the contract to cover one
// operation. Most operations need nothing: the baseline is derived from
// the schemas and the path values from the world. Listing an operation
// here is the statement that its variants were looked at; an enabled
// operation missing here fails TestContractFuzz.
type fixture struct {
	// body replaces the baseline body derived from the schema.
	body map[string]any
}

// fixtures lists every enabled operation of api/operations.yaml. The few
// bodies given make the baseline valid for the use case too, so the legal
// edge cases of their free-text members really reach the database.
var fixtures = map[string]fixture{
	"addSpaceMember": {},
	"createApp": {body: map[string]any{"manifest": map[string]any{
		"name": "Tracker", "description": "Turns escalations into tickets.",
		"scopes": []any{"events:subscribe", "messages:read"}, "events": []any{"message.created"},
		"delivery": map[string]any{"mode": "webhook", "events_url": "https://hooks.example.com/bothy/events"},
	}}},
	"createAppGrant":            {},
	"createChannel":             {},
	"createPerson":              {body: map[string]any{"email": "sam.second@example.com", "display_name": "Sam", "password": "correct horse battery staple"}},
	"createPersonalToken":       {},
	"createSession":             {},
	"createSpace":               {},
	"createWebhookSubscription": {},
	"deleteAppGrant":            {},
	"deleteMessage":             {},
	"deleteSession":             {},
	"deleteWebhookSubscription": {},
	"getApp":                    {},
	"getInstance":               {},
	"getJwks":                   {},
	"getMe":                     {},
	"getWebhookKeys":            {},
	"installApp":                {},
	"listAppGrants":             {},
	"listApps":                  {},
	"listChannels":              {},
	"listMessages":              {},
	"listPersonalTokens":        {},
	"listSpaces":                {},
	"listWebhookDeliveries":     {},
	"listWebhookSubscriptions":  {},
	"postMessage":               {body: map[string]any{"text": "Hello Sam"}},
	"recoverWebhookDeliveries":  {body: map[string]any{"since": "2026-11-29T22:00:00Z", "until": "2026-11-30T06:00:00Z"}},
	"redeliverWebhook":          {},
	"resumeApp":                 {},
	"revokePersonalToken":       {},
	"sendWebhookTest":           {},
	"setAppScopes":              {},
	"stepUpSession":             {},
	"suspendApp":                {},
	"uninstallApp":              {},
	"updateMessage":             {},
	"updateWebhookSubscription": {},
}

// principal is one caller of the suite.
type principal struct{ name, token string }

// TestContractFuzz is the contract-driven fuzz suite of issue 12. It reads
// api/openapi.yaml and, for every enabled operation, derives a valid
// baseline request and one malformed variant per defect of each path
// parameter, query parameter, header parameter and body member (wrong
// type, out of range, empty, huge, NUL, lone surrogates, repeated, missing,
// unknown, trailing data, content coding, ...), and sends each through the
// real chain of a process of role api on PostgreSQL as Robin (owner), Alex
// (member) and without credentials. It requires: no answer 5xx; every
// malformed variant answers 4xx; every 4xx is an application/problem+json
// document with type, title, status and code (and a validation_failed one
// with errors[] items that each have a code, one of them at the defective
// place); and no row of any table
// changed (row count and hash per table). Variants the contract allows
// (U+2028 or a right-to-left mark in free text) run afterwards, as Robin,
// and must not answer 5xx either. The log reports the requests per
// operation.
func TestContractFuzz(t *testing.T) {
	t.Parallel()
	spec, err := os.ReadFile("../../../../api/openapi.yaml")
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	require.NoError(t, err)

	enabled := map[string]bool{}
	for _, op := range api.Operations() {
		enabled[op.ID] = true
		require.Contains(t, fixtures, op.ID, "operation %s is enabled without coverage: add it to fixtures of the fuzz suite", op.ID)
	}
	for id := range fixtures {
		require.True(t, enabled[id], "fixture %s names no enabled operation", id)
	}

	e := newEdge(t, nil)
	values := e.pathValues(t)
	check := baselineChecker(t, spec)

	var baselines []*baseline
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !enabled[op.OperationID] {
				continue
			}
			b := &baseline{op: op, item: item, method: method, path: "/api/v1" + path, values: map[string]string{}, header: http.Header{}}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value.In == openapi3.ParameterInPath {
					v, ok := values[p.Value.Name]
					require.True(t, ok, "no world value for path parameter %s of %s", p.Value.Name, op.OperationID)
					b.values[p.Value.Name] = v
				}
			}
			if op.RequestBody != nil {
				mt := op.RequestBody.Value.Content.Get("application/json")
				require.NotNil(t, mt, "%s takes JSON", op.OperationID)
				b.schema = mt.Schema.Value
				b.body, _ = sample(b.schema, "").(map[string]any)
				if f := fixtures[op.OperationID]; f.body != nil {
					b.body = f.body
				}
			}
			check(t, b)
			baselines = append(baselines, b)
		}
	}
	slices.SortFunc(baselines, func(a, b *baseline) int { return strings.Compare(a.op.OperationID, b.op.OperationID) })
	require.Len(t, baselines, len(fixtures), "every enabled operation has a baseline")

	principals := []principal{{"owner", e.w.Robin.Token}, {"member", e.w.Alex.Token}, {"anonymous", ""}}
	before := e.snapshot(t)
	var failures []string
	total := 0
	for _, b := range baselines {
		vs := e.variants(b)
		n := 0
		for _, v := range vs {
			if v.legal {
				continue
			}
			for _, p := range principals {
				n++
				if msg := judge(e.do(t, p.token, v.rq), v); msg != "" {
					failures = append(failures, fmt.Sprintf("%s %s as %s: %s", b.op.OperationID, v.where, p.name, msg))
				}
			}
		}
		legal := 0
		for _, v := range vs {
			if v.legal {
				legal++
			}
		}
		// The four variants every operation gets (unknown parameter, bad
		// escape, content coding, body where none or body defects).
		require.GreaterOrEqual(t, n, 4*len(principals), "%s has too few variants to count as covered", b.op.OperationID)
		t.Logf("%-26s %5d requests (%d malformed variants x %d principals), %d legal edge cases", b.op.OperationID, n, n/len(principals), len(principals), legal)
		total += n
	}
	after := e.snapshot(t)
	for table, s := range before {
		if after[table] != s {
			failures = append(failures, fmt.Sprintf("table %s changed: %d rows before, %d after", table, s.Rows, after[table].Rows))
		}
	}
	for table := range after {
		if _, ok := before[table]; !ok {
			failures = append(failures, "table "+table+" appeared")
		}
	}
	// The legal edge cases may succeed and write; they only must not fail
	// the server.
	legal, accepted := 0, 0
	for _, b := range baselines {
		for _, v := range e.variants(b) {
			if v.legal {
				legal++
				a := e.do(t, e.w.Robin.Token, v.rq)
				if a.status < 300 {
					accepted++
				}
				if msg := judge(a, v); msg != "" {
					failures = append(failures, fmt.Sprintf("%s %s as owner: %s", b.op.OperationID, v.where, msg))
				}
			}
		}
	}
	t.Logf("%d operations, %d malformed requests, %d legal edge cases (%d accepted), %d failures", len(baselines), total, legal, accepted, len(failures))
	if len(failures) > 0 {
		if len(failures) > 60 {
			failures = append(failures[:60], fmt.Sprintf("... and %d more", len(failures)-60))
		}
		t.Fatalf("the edge broke its contract:\n%s", strings.Join(failures, "\n"))
	}
}

// judge returns what is wrong with the answer a to variant v, or "".
func judge(a answer, v variant) string {
	switch {
	case a.status >= 500:
		return fmt.Sprintf("answered %d: %s", a.status, clip(a.body))
	case a.status < 400 && !v.legal:
		return fmt.Sprintf("accepted with %d", a.status)
	case a.status < 400:
		return ""
	case a.problem == nil:
		return fmt.Sprintf("answered %d with %q, not a problem document", a.status, a.header.Get("Content-Type"))
	}
	p := a.problem
	switch {
	case p.Code == "" || p.Type != httpserver.ProblemTypeBase+string(p.Code):
		return fmt.Sprintf("problem type %q does not match code %q", p.Type, p.Code)
	case p.Title == "":
		return "problem without title"
	case p.Status != a.status:
		return fmt.Sprintf("problem status %d on a %d answer", p.Status, a.status)
	case p.Code == errs.CodeValidationFailed && len(p.Errors) == 0:
		return "validation_failed without errors[] pointers"
	}
	pointed := v.pointer == "" || p.Code != errs.CodeValidationFailed
	for _, f := range p.Errors {
		if f.Code == "" {
			return fmt.Sprintf("an item at %q without code", f.Pointer)
		}
		if f.Pointer == v.pointer || strings.HasPrefix(f.Pointer, v.pointer+"/") {
			pointed = true
		}
	}
	if !pointed {
		return fmt.Sprintf("validation_failed points at %v, not at %s", p.Errors, v.pointer)
	}
	return ""
}

// clip shortens a body for a failure message.
func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// pathValues are valid values of every path parameter of the contract,
// from the world: real IDs where the world has the resource, so variants
// of other parts reach as deep as they can. A message of Alex in
// Eskalation is posted for messageId.
func (e *edge) pathValues(t *testing.T) map[string]string {
	t.Helper()
	w := e.w
	rq := request{method: "POST", target: "/api/v1/channels/" + w.Eskalation.String() + "/messages", body: `{"text":"Hello Sam"}`}
	a := e.do(t, w.Alex.Token, rq)
	require.Equal(t, http.StatusCreated, a.status, string(a.body))
	return map[string]string{
		"appId":          w.Tracker.ID.String(),
		"spaceId":        w.Support.String(),
		"channelId":      w.Eskalation.String(),
		"grantId":        w.G6.ID.String(),
		"subscriptionId": e.subscriptionID(t),
		"messageId":      e.one(t, `SELECT id::text FROM messages ORDER BY id LIMIT 1`),
		"tokenId":        e.one(t, `SELECT id::text FROM personal_tokens ORDER BY id LIMIT 1`),
		// No delivery exists yet; a well-formed ID is all validation needs.
		"deliveryId": "01938f2e-4c1a-7b3e-9d2f-5a6b7c8d9e03",
	}
}

// baselineChecker returns a check that a baseline passes the request
// validator of the full contract, so every variant carries exactly the
// defect it was made with.
func baselineChecker(t *testing.T, spec []byte) func(t *testing.T, b *baseline) {
	var reached bool
	var failed error
	v, err := api.NewValidator(api.ValidatorOptions{Spec: spec, OnError: func(_ http.ResponseWriter, _ *http.Request, err error) { failed = err }})
	require.NoError(t, err)
	h := v.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	return func(t *testing.T, b *baseline) {
		t.Helper()
		reached, failed = false, nil
		rq := b.request("", "", "", b.bodyJSON())
		r := httptest.NewRequestWithContext(context.Background(), rq.method, rq.target, strings.NewReader(rq.body))
		if rq.body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		require.True(t, reached, "the baseline of %s is valid: %v (give it a fixture body)", b.op.OperationID, failed)
	}
}
