package api

import (
	"reflect"
	"slices"
	"strings"
)

// RegistrationError lists every problem VerifyRegistrations found, so one
// run names them all.
type RegistrationError struct {
	// Problems are constant-form English sentences naming operation IDs,
	// action IDs and Go method names only.
	Problems []string
}

// Error returns the problems joined in one line.
func (e *RegistrationError) Error() string {
	return "api: route registration: " + strings.Join(e.Problems, "; ")
}

// VerifyRegistrations is the route registration check of M1-25 (AZ-P1): a
// server may start only when every enabled operation is authorised with an
// action of the catalogue that is not deferred, and has a handler.
//
// ops is the table of enabled operations (Operations()); known holds the
// action IDs of the action catalogue and deferred the IDs whose requirement
// is still deferred; server is the value the role assembly passes to
// NewStrictHandler. It returns nil or a *RegistrationError naming:
//
//   - an operation listed twice, or two operations with one pattern;
//   - an empty, unknown or deferred x-authz-action;
//   - a nil server, a server that does not implement StrictServerInterface,
//     a server without the method of an operation, or a method promoted from
//     a nil embedded field (Go would panic on the first request).
//
// Go's type system already rejects a server that lacks a method of
// StrictServerInterface at compile time; the reflection checks here cover
// what it cannot see: nil values behind embedded fields, and a table that
// drifted from the generated interface.
func VerifyRegistrations(ops []Operation, known, deferred []string, server any) error {
	var problems []string
	seenID := map[string]bool{}
	seenPattern := map[string]bool{}
	sv := reflect.ValueOf(server)
	nilServer := server == nil || (sv.Kind() == reflect.Pointer && sv.IsNil())
	if nilServer {
		problems = append(problems, "the server is nil")
	} else if _, ok := server.(StrictServerInterface); !ok {
		problems = append(problems, "the server does not implement StrictServerInterface")
	}
	for _, op := range ops {
		duplicate := seenID[op.ID]
		if duplicate {
			problems = append(problems, op.ID+": listed twice")
		}
		if seenPattern[op.Pattern()] {
			problems = append(problems, op.Pattern()+": two operations share this pattern")
		}
		seenID[op.ID], seenPattern[op.Pattern()] = true, true
		if duplicate {
			continue
		}
		switch {
		case op.Action == "":
			problems = append(problems, op.ID+": x-authz-action is empty")
		case !slices.Contains(known, op.Action):
			problems = append(problems, op.ID+": x-authz-action "+op.Action+" is not in the action catalogue")
		case slices.Contains(deferred, op.Action):
			problems = append(problems, op.ID+": x-authz-action "+op.Action+" is deferred")
		}
		if nilServer {
			continue
		}
		if !sv.MethodByName(op.Handler).IsValid() {
			problems = append(problems, op.ID+": the server has no method "+op.Handler)
			continue
		}
		if field := nilProvider(sv, op.Handler, ""); field != "" {
			problems = append(problems, op.ID+": method "+op.Handler+" comes from the nil embedded field "+field)
		}
	}
	if len(problems) > 0 {
		return &RegistrationError{Problems: problems}
	}
	return nil
}

// nilProvider returns the dotted name of a nil embedded field (interface or
// pointer) of v that provides method, searching embedded fields depth
// first, or "" when every provider is set. A method that the outer type
// declares itself and that also exists on a nil embedded field is reported
// too: reflection cannot tell the two apart, and such a field is a trap.
func nilProvider(v reflect.Value, method, prefix string) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous || !provides(f.Type, method) {
			continue
		}
		fv := v.Field(i)
		name := prefix + f.Name
		if (fv.Kind() == reflect.Interface || fv.Kind() == reflect.Pointer) && fv.IsNil() {
			return name
		}
		if deeper := nilProvider(fv, method, name+"."); deeper != "" {
			return deeper
		}
	}
	return ""
}

// provides reports whether a value of type t (or a pointer to it) has method.
func provides(t reflect.Type, method string) bool {
	if _, ok := t.MethodByName(method); ok {
		return true
	}
	if t.Kind() != reflect.Interface && t.Kind() != reflect.Pointer {
		_, ok := reflect.PointerTo(t).MethodByName(method)
		return ok
	}
	return false
}
