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
		errs.CodeRateLimited, errs.CodeInternal,
	}, inContract)
}
