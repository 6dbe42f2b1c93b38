package api_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
)

// TestProblemCodesMatchErrs keeps the ProblemCode enum of the contract (and
// so the generated table of docs/spec/06-api.md section 5) equal to the
// codes of kernel/errs.
func TestProblemCodesMatchErrs(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(contract(t))
	require.NoError(t, err)
	var inContract []errs.Code
	for _, v := range doc.Components.Schemas["ProblemCode"].Value.Enum {
		inContract = append(inContract, errs.Code(v.(string)))
	}
	require.ElementsMatch(t, []errs.Code{
		errs.CodeValidationFailed, errs.CodeWebhookHostNotAllowed, errs.CodeCursorInvalid,
		errs.CodeUnauthorized, errs.CodeStepUpRequired, errs.CodeForbidden, errs.CodeNotFound,
		errs.CodeConflict, errs.CodeIdempotencyKeyReuse, errs.CodePayloadTooLarge,
		errs.CodeUnsupportedMediaType, errs.CodeRateLimited, errs.CodeUnavailable, errs.CodeInternal,
	}, inContract)
}

// TestEveryStringOfTheContractHasAMaxLength keeps every string schema of
// the contract bounded (issue 12): a string without an enum needs a
// maxLength, so the validator refuses a huge value before any handler or
// the database sees it. It walks every schema reachable from components,
// parameters, headers, request bodies and responses.
func TestEveryStringOfTheContractHasAMaxLength(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(contract(t))
	require.NoError(t, err)
	seen := map[*openapi3.Schema]bool{}
	var unbounded []string
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if s.Type.Is(openapi3.TypeString) && len(s.Enum) == 0 && s.MaxLength == nil {
			unbounded = append(unbounded, where)
		}
		for name, p := range s.Properties {
			walk(where+"/"+name, p)
		}
		walk(where+"/items", s.Items)
		if s.AdditionalProperties.Schema != nil {
			walk(where+"/additionalProperties", s.AdditionalProperties.Schema)
		}
		for _, group := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range group {
				walk(where+"/of", sub)
			}
		}
		walk(where+"/not", s.Not)
	}
	for name, s := range doc.Components.Schemas {
		walk("schemas/"+name, s)
	}
	for name, p := range doc.Components.Parameters {
		walk("parameters/"+name, p.Value.Schema)
	}
	for name, h := range doc.Components.Headers {
		walk("headers/"+name, h.Value.Schema)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range op.Parameters {
				walk(method+" "+path+" "+p.Value.Name, p.Value.Schema)
			}
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(method+" "+path+" body", mt.Schema)
				}
			}
			for code, resp := range op.Responses.Map() {
				for _, mt := range resp.Value.Content {
					walk(method+" "+path+" "+code, mt.Schema)
				}
			}
		}
	}
	require.Empty(t, unbounded, "strings without maxLength or enum")
}
