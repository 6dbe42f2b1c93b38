package errs

import (
	"context"
	"errors"
	"fmt"
	"regexp"
)

// classRE is what a class declared by an error may look like: a short code,
// never free text.
var classRE = regexp.MustCompile(`^[A-Za-z0-9_.*/-]{1,64}$`)

// ClassOther is the class of an error that says nothing safe about itself,
// as in the OpenTelemetry semantic conventions for error.type.
const ClassOther = "_OTHER"

// SQLState returns the SQLSTATE of the first error in err's chain that
// carries one (a method SQLState() string, as the driver's errors of
// PostgreSQL have) and true, or "" and false when none does. It lets the
// kernel read the database's answer without the driver's types.
func SQLState(err error) (string, bool) {
	var answered interface{ SQLState() string }
	if errors.As(err, &answered) {
		return answered.SQLState(), true
	}
	return "", false
}

// Class returns a stable, low-cardinality class for err that is safe to log
// and to put on spans and metrics (the attribute error.type). It is the one
// classifier of the server: the HTTP layer, the job runtime, the consumer
// frame, the start-up of a role and the log handler all log this class
// (D-CL-10). It never returns the error's text. The first rule that applies
// wins:
//
//  1. an error in the chain with a method ErrorType() string declares its
//     class (for example egress address_blocked); a class that does not look
//     like a code becomes _OTHER;
//  2. an *Error gives its code, and code/reason when it has a reason; an
//     internal *Error that wraps a cause (Wrap) gives the class of the
//     cause instead, because "internal" tells an operator nothing;
//  3. context.DeadlineExceeded gives deadline_exceeded, context.Canceled
//     gives canceled;
//  4. an error with SQLState() string (a PostgreSQL error) gives pg_<SQLSTATE>;
//  5. otherwise the Go type of the innermost error of the chain (the first
//     member of a joined error), for example *net.OpError, except the
//     anonymous types of errors.New and fmt.Errorf, which give _OTHER.
//
// Whether an error is a database outage is pg.IsUnavailable's answer, not a
// class: it needs the driver's types.
//
// It returns "" for nil.
func Class(err error) string {
	if err == nil {
		return ""
	}
	var declared interface{ ErrorType() string }
	if errors.As(err, &declared) {
		if c := declared.ErrorType(); classRE.MatchString(c) {
			return c
		}
		return ClassOther
	}
	if e, ok := As(err); ok {
		if e.Code == CodeInternal && e.cause != nil {
			return Class(e.cause)
		}
		if e.Reason != "" {
			return string(e.Code) + "/" + e.Reason
		}
		return string(e.Code)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	if code, ok := SQLState(err); ok {
		if c := "pg_" + code; classRE.MatchString(c) {
			return c
		}
		return ClassOther
	}
	name := fmt.Sprintf("%T", innermost(err))
	switch name {
	case "*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		return ClassOther
	}
	if !classRE.MatchString(name) {
		return ClassOther
	}
	return name
}

// innermost follows the chain of err to its end, taking the first member of
// a joined error.
func innermost(err error) error {
	for {
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			next := u.Unwrap()
			if next == nil {
				return err
			}
			err = next
		case interface{ Unwrap() []error }:
			list := u.Unwrap()
			if len(list) == 0 || list[0] == nil {
				return err
			}
			err = list[0]
		default:
			return err
		}
	}
}
