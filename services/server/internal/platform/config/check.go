package config

import (
	"regexp"
	"strings"
)

var checkNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Check is a cross condition between keys that the bounds of single keys
// cannot express, such as webhook.retry_backoff_base at most
// webhook.retry_backoff_cap. internal/wire lists them (configChecks).
type Check struct {
	// Name is a stable snake_case identifier (webhook_backoff_order).
	Name string
	// Keys are the keys the check reads.
	Keys []string
	// Rule is the constant English sentence shown when the check fails; it
	// names every key of Keys and never a value.
	Rule string
	// Holds reports whether the values satisfy the check.
	Holds func(v *Values) bool
}

// ValidateChecks verifies a list of checks against the registry: unique
// well-formed names, registered keys, a rule naming every key and a
// function. The error is an *Error.
func (r *Registry) ValidateChecks(checks []Check) error {
	var ps []Problem
	seen := map[string]bool{}
	for _, c := range checks {
		bad := func(rule string) { ps = append(ps, Problem{Check: c.Name, Rule: rule}) }
		if !checkNameRE.MatchString(c.Name) {
			bad("check name must be snake_case")
		}
		if seen[c.Name] {
			bad("check is listed twice")
		}
		seen[c.Name] = true
		if len(c.Keys) == 0 {
			bad("check names no key")
		}
		for _, k := range c.Keys {
			if _, ok := r.Lookup(k); !ok {
				bad("check reads " + k + ", which is not a registered key")
			}
			if !strings.Contains(c.Rule, k) {
				bad("check rule does not name " + k)
			}
		}
		if c.Holds == nil {
			bad("check has no function")
		}
	}
	return errorOf(ps)
}

// Check runs the checks and returns an *Error listing every check that does
// not hold, by name and rule.
func (v *Values) Check(checks []Check) error {
	var ps []Problem
	for _, c := range checks {
		if !c.Holds(v) {
			ps = append(ps, Problem{Check: c.Name, Rule: c.Rule})
		}
	}
	return errorOf(ps)
}
