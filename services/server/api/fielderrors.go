package api

import (
	"cmp"
	"errors"
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/kernel/ids"
)

// stringFormats are the string formats of the contract that the validator
// checks. They are passed per validation, so no global state of kin-openapi
// changes. Formats not listed (password) are documentation only.
var stringFormats = map[string]openapi3.StringFormatValidator{
	// uuid: the canonical form ids.Parse accepts; every ID is an ids.ID.
	"uuid": openapi3.NewCallbackValidator(func(s string) error {
		_, err := ids.Parse(s)
		return err
	}),
	// email: one bare address, no display name.
	"email": openapi3.NewCallbackValidator(func(s string) error {
		a, err := mail.ParseAddress(s)
		if err != nil {
			return err
		}
		if a.Address != s {
			return errors.New("not a bare address")
		}
		return nil
	}),
	// uri: an absolute URI (RFC 3986 section 4.3). The https and host rules
	// of webhook addresses are the use case's (400 webhook_host_not_allowed).
	"uri": openapi3.NewCallbackValidator(func(s string) error {
		u, err := url.Parse(s)
		if err != nil {
			return err
		}
		if !u.IsAbs() {
			return errors.New("not an absolute URI")
		}
		return nil
	}),
	"uri-reference": openapi3.NewCallbackValidator(func(s string) error {
		_, err := url.Parse(s)
		return err
	}),
}

// The item codes the validator produces besides the schema keywords.
const (
	codeUnknownMember    = "unknown_member"
	codeUnknownParameter = "unknown_parameter"
	codeRequired         = "required"
	codeEmpty            = "empty"
	codeType             = "type"
	codeInvalidJSON      = "invalid_json"
	codeMediaType        = "media_type"
	codeBodyNotAllowed   = "body_not_allowed"
	codeInvalid          = "invalid"
	// codeRepeated: a single-valued query or header parameter given more
	// than once (which value would count is not for the server to guess).
	codeRepeated = "repeated"
	// codeInvalidCharacter: a NUL character or an unpaired surrogate, which
	// PostgreSQL cannot store, in a string, member name or parameter.
	codeInvalidCharacter = "invalid_character"
	// codeInvalidEncoding: the query string has a bad percent escape.
	codeInvalidEncoding = "invalid_encoding"
	// codeDuplicateMember: a member name twice in one JSON object.
	codeDuplicateMember = "duplicate_member"
	// codeTrailingData: anything but white space after the JSON document.
	codeTrailingData = "trailing_data"
)

// keywordCodes maps the JSON Schema keyword a value failed to its item
// code: the keyword in snake case, except where a clearer name exists.
var keywordCodes = map[string]string{
	"type":             codeType,
	"nullable":         codeType, // JSON null is never accepted (ADR 0053)
	"required":         codeRequired,
	"properties":       codeUnknownMember, // additionalProperties: false
	"format":           "format",
	"enum":             "enum",
	"pattern":          "pattern",
	"minLength":        "min_length",
	"maxLength":        "max_length",
	"minItems":         "min_items",
	"maxItems":         "max_items",
	"uniqueItems":      "unique_items",
	"minimum":          "minimum",
	"maximum":          "maximum",
	"exclusiveMinimum": "minimum",
	"exclusiveMaximum": "maximum",
	"multipleOf":       "multiple_of",
	"minProperties":    "min_properties",
	"maxProperties":    "max_properties",
	"oneOf":            "one_of",
	"anyOf":            "any_of",
	"allOf":            "all_of",
	"not":              "not",
	"discriminator":    "discriminator",
}

// details are the constant English explanations of the item codes. They
// never contain the offending value.
var details = map[string]string{
	codeUnknownMember:    "This member is not part of the request schema.",
	codeUnknownParameter: "This query parameter is not part of the operation.",
	codeRequired:         "This value is required.",
	codeEmpty:            "This value must not be empty.",
	codeType:             "This value has the wrong type.",
	codeInvalidJSON:      "The body is not valid JSON.",
	codeMediaType:        "The body has an unsupported media type.",
	codeBodyNotAllowed:   "This operation takes no request body.",
	codeInvalid:          "This value is invalid.",
	codeRepeated:         "This parameter takes one value and was given several.",
	codeInvalidCharacter: "This value contains a character that cannot be stored.",
	codeInvalidEncoding:  "The query string has a malformed percent escape.",
	codeDuplicateMember:  "This member appears more than once in its object.",
	codeTrailingData:     "The body must be exactly one JSON document.",
	"format":             "This value does not have the required format.",
	"enum":               "This value is not one of the allowed values.",
	"pattern":            "This value does not match the required pattern.",
	"min_length":         "This value is too short.",
	"max_length":         "This value is too long.",
	"min_items":          "This list has too few items.",
	"max_items":          "This list has too many items.",
	"unique_items":       "This list has repeated items.",
	"minimum":            "This value is too small.",
	"maximum":            "This value is too large.",
	"multiple_of":        "This value is not an allowed multiple.",
	"min_properties":     "This object has too few members.",
	"max_properties":     "This object has too many members.",
	"one_of":             "This value matches none or several of the allowed forms.",
	"any_of":             "This value matches none of the allowed forms.",
	"all_of":             "This value does not match every required form.",
	"not":                "This value has a forbidden form.",
	"discriminator":      "This value has an unknown kind.",
}

// field returns a FieldError with the constant detail of its code.
func field(pointer, code string) errs.FieldError {
	return errs.FieldError{Pointer: pointer, Code: code, Detail: details[code]}
}

// fieldErrors turns the error of openapi3filter.ValidateRequest into item
// errors. fatal is set instead when the request cannot be judged: a body over
// the chain's limit (payload_too_large) or a body that could not be read
// (internal).
func fieldErrors(err error) (fields []errs.FieldError, fatal *errs.Error) {
	var walk func(err error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case openapi3.MultiError:
			for _, inner := range e {
				walk(inner)
			}
		case *openapi3filter.RequestError:
			fields = append(fields, requestErrorFields(e, &fatal)...)
		default:
			fatal = errs.Wrap(err, "validating request")
		}
	}
	walk(err)
	if fatal != nil {
		return nil, fatal
	}
	return fields, nil
}

// requestErrorFields maps one RequestError. A read failure sets *fatal.
func requestErrorFields(re *openapi3filter.RequestError, fatal **errs.Error) []errs.FieldError {
	switch {
	case re.Parameter != nil:
		base := re.Parameter.In + "/" + escapeToken(re.Parameter.Name)
		switch {
		case errors.Is(re.Err, openapi3filter.ErrInvalidRequired):
			return []errs.FieldError{field(base, codeRequired)}
		case errors.Is(re.Err, openapi3filter.ErrInvalidEmptyValue):
			return []errs.FieldError{field(base, codeEmpty)}
		}
		var pe *openapi3filter.ParseError
		if errors.As(re.Err, &pe) {
			return []errs.FieldError{field(base, codeType)}
		}
		// Parameters are scalars here: the pointer names the parameter.
		return schemaFields(re.Err, base, false)
	case re.RequestBody != nil:
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(re.Err, &tooLarge):
			*fatal = errs.New(errs.CodePayloadTooLarge, "request body too large")
			return nil
		case re.Reason == "reading failed":
			*fatal = errs.Wrap(re.Err, "reading request body")
			return nil
		case errors.Is(re.Err, openapi3filter.ErrInvalidRequired):
			return []errs.FieldError{field("", codeRequired)}
		case re.Err == nil && strings.HasPrefix(re.Reason, "header Content-Type has unexpected value"):
			return []errs.FieldError{field("header/Content-Type", codeMediaType)}
		}
		var pe *openapi3filter.ParseError
		if errors.As(re.Err, &pe) {
			return []errs.FieldError{field("", codeInvalidJSON)}
		}
		return schemaFields(re.Err, "", true)
	default:
		// RejectWhenRequestBodyNotSpecified is the only other source.
		return []errs.FieldError{field("", codeBodyNotAllowed)}
	}
}

// schemaFields maps the schema errors below err. In a body the pointer of
// each error is base plus the JSON pointer of the failing value.
func schemaFields(err error, base string, body bool) []errs.FieldError {
	var out []errs.FieldError
	var walk func(err error)
	walk = func(err error) {
		var me openapi3.MultiError
		if errors.As(err, &me) {
			for _, e := range me {
				walk(e)
			}
			return
		}
		var se *openapi3.SchemaError
		if !errors.As(err, &se) {
			out = append(out, field(base, codeInvalid))
			return
		}
		pointer := base
		if body {
			for _, token := range se.JSONPointer() {
				pointer += "/" + escapeToken(token)
			}
		}
		code, ok := keywordCodes[se.SchemaField]
		if !ok {
			code = codeInvalid
		}
		if code == codeUnknownMember {
			for _, name := range unknownMembers(se) {
				out = append(out, field(pointer+"/"+escapeToken(name), code))
			}
			return
		}
		out = append(out, field(pointer, code))
	}
	walk(err)
	return out
}

// unknownMembers returns the members of the object that failed
// additionalProperties: false, computed from the value and the schema so
// that the message of the error (which names them) is never parsed.
func unknownMembers(se *openapi3.SchemaError) []string {
	obj, ok := se.Value.(map[string]any)
	if !ok || se.Schema == nil {
		return []string{""}
	}
	var names []string
	for name := range obj {
		if _, known := se.Schema.Properties[name]; !known {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// tokenEscaper escapes the characters RFC 6901 section 3 reserves in a
// JSON pointer token. A Replacer builds its tables on first use: one for
// the package, not one per token (a request's validation escapes several).
var tokenEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// escapeToken escapes one JSON pointer token (RFC 6901 section 3); a token
// without ~ or / comes back as it is.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return tokenEscaper.Replace(s)
}

// normalise sorts field errors by pointer and code and removes repeats, so
// answers are deterministic.
func normalise(fields []errs.FieldError) []errs.FieldError {
	slices.SortFunc(fields, func(a, b errs.FieldError) int {
		return cmp.Or(strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Code, b.Code))
	})
	return slices.CompactFunc(fields, func(a, b errs.FieldError) bool {
		return a.Pointer == b.Pointer && a.Code == b.Code
	})
}
