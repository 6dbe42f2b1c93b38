package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/kernel/errs"
)

func TestCodeOfFollowsTheChain(t *testing.T) {
	t.Parallel()
	wrapped := fmt.Errorf("creating subscription: %w", errs.Conflict("app_not_installed"))
	require.Equal(t, errs.CodeConflict, errs.CodeOf(wrapped))
	require.Equal(t, "app_not_installed", errs.ReasonOf(wrapped))
	require.Equal(t, errs.CodeInternal, errs.CodeOf(errors.New("disk full")))
	require.Equal(t, errs.Code(""), errs.CodeOf(nil))
}

func TestErrorTextCarriesCodeReasonAndMessageOnly(t *testing.T) {
	t.Parallel()
	require.Equal(t, "conflict/one_time_secret: state conflict", errs.Conflict("one_time_secret").Error())
	v := errs.Validation(errs.Field("/url", "https_required"))
	require.Equal(t, "validation_failed: request is invalid", v.Error())
	require.Equal(t, []errs.FieldError{{Pointer: "/url", Code: "https_required"}}, v.Fields)
}

func TestWrapKeepsCause(t *testing.T) {
	t.Parallel()
	cause := errors.New("connection reset")
	err := errs.Wrap(cause, "loading subscription")
	require.ErrorIs(t, err, cause)
	require.Equal(t, errs.CodeInternal, errs.CodeOf(err))
}
