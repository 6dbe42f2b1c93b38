package api

import (
	"errors"
	"net/http"

	"bothy/server/internal/kernel/errs"
)

// ParamError turns an error of the generated server's parameter binding
// into the validation_failed error the contract promises, with one item
// whose pointer names the parameter in the form of the validator
// (`path/appId`, `query/limit`, `header/Idempotency-Key`):
//
//   - InvalidParamFormatError and UnmarshalingParamError: type;
//   - RequiredParamError and RequiredHeaderError: required;
//   - TooManyValuesForParamError: repeated;
//   - UnescapedCookieParamError: invalid (the contract has no cookies).
//
// The location of a named parameter comes from the operation of r: a path
// parameter of its route is `path/`, a header parameter `header/`, any
// other `query/`. Every other error is returned unchanged. The validator
// runs before the binding and reports these defects first, so this is the
// safety net that keeps a binding error from ever answering 500.
func (v *Validator) ParamError(r *http.Request, err error) error {
	var (
		name, code string
		inFormat   *InvalidParamFormatError
		unmarshal  *UnmarshalingParamError
		required   *RequiredParamError
		header     *RequiredHeaderError
		tooMany    *TooManyValuesForParamError
		cookie     *UnescapedCookieParamError
	)
	switch {
	case errors.As(err, &inFormat):
		name, code = inFormat.ParamName, codeType
	case errors.As(err, &unmarshal):
		name, code = unmarshal.ParamName, codeType
	case errors.As(err, &required):
		name, code = required.ParamName, codeRequired
	case errors.As(err, &header):
		return errs.Validation(field("header/"+escapeToken(header.ParamName), codeRequired))
	case errors.As(err, &tooMany):
		name, code = tooMany.ParamName, codeRepeated
	case errors.As(err, &cookie):
		return errs.Validation(field("cookie/"+escapeToken(cookie.ParamName), codeInvalid))
	default:
		return err
	}
	return errs.Validation(field(v.locate(r, name)+"/"+escapeToken(name), code))
}

// locate returns the location of the parameter name in the operation that
// r matches: path, header or query.
func (v *Validator) locate(r *http.Request, name string) string {
	if b := v.routeOf(r); b != nil {
		for _, p := range b.pathParams {
			if p == name {
				return "path"
			}
		}
		if _, ok := b.single[[2]string{"header", http.CanonicalHeaderKey(name)}]; ok {
			return "header"
		}
	}
	return "query"
}

// routeOf returns the route r matches, or nil.
func (v *Validator) routeOf(r *http.Request) *route {
	if h, _ := v.lookup.Handler(r); h != nil {
		if b, ok := h.(*boundRoute); ok {
			return b.route
		}
	}
	return nil
}
