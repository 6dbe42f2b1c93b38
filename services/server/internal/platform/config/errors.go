package config

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Source tells where a value came from.
type Source string

// The sources, in increasing precedence.
const (
	// SourceDefault: the registry's default.
	SourceDefault Source = "default"
	// SourceFile: the YAML file.
	SourceFile Source = "file"
	// SourceEnv: a BOTHY_ environment variable.
	SourceEnv Source = "env"
)

// Problem is one defect of a configuration. It never holds a value.
type Problem struct {
	// Key is the dotted key name; empty for an unknown environment variable
	// and for a file that is not valid YAML.
	Key string
	// Env is the environment variable for SourceEnv.
	Env string
	// Source tells where the defective value came from.
	Source Source
	// Check is the name of the failed cross check; Key is then empty.
	Check string
	// Rule is a constant English phrase: the rule that was broken.
	Rule string
}

// String renders the problem as "key (where): rule".
func (p Problem) String() string {
	var b strings.Builder
	switch {
	case p.Check != "":
		b.WriteString("check " + p.Check)
	case p.Key != "":
		b.WriteString(p.Key)
		switch p.Source {
		case SourceEnv:
			b.WriteString(" (from " + p.Env + ")")
		case SourceFile:
			b.WriteString(" (in the file)")
		case SourceDefault:
			b.WriteString(" (default)")
		}
	case p.Env != "":
		b.WriteString(p.Env)
	default:
		b.WriteString("configuration file")
	}
	b.WriteString(": " + p.Rule)
	return b.String()
}

// Error is returned by loading, by checks and by NewRegistry: every problem
// found, ordered by key. Use errors.As to read the problems.
type Error struct {
	// Problems lists every problem, ordered by key, check and variable.
	Problems []Problem
}

// Error lists the problems, one per line when there are several.
func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "config: " + e.Problems[0].String()
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return "config: " + strconv.Itoa(len(e.Problems)) + " problems:\n\t" + strings.Join(lines, "\n\t")
}

// errorOf returns nil for no problems, else an *Error with the problems in a
// stable order.
func errorOf(ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Check, b.Check), cmp.Compare(a.Env, b.Env))
	})
	return &Error{Problems: ps}
}
