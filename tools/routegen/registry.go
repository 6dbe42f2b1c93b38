package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Registry is the content of services/server/api/operations.yaml: which
// operations the server serves now and which come later.
type Registry struct {
	// Enabled lists the operationIds whose handlers exist, sorted.
	Enabled []string `yaml:"enabled"`
	// Later lists the operations that are not served yet, sorted by ID.
	Later []LaterOperation `yaml:"later"`
}

// LaterOperation is one entry under `later:`.
type LaterOperation struct {
	// OperationID is the operationId in api/openapi.yaml.
	OperationID string `yaml:"operationId"`
	// Milestone is the plan milestone that implements it, for example M2.
	Milestone string `yaml:"milestone"`
	// Ticket optionally names the ticket, for example M2-26.
	Ticket string `yaml:"ticket,omitempty"`
}

var (
	milestonePattern = regexp.MustCompile(`^M[0-9]+$`)
	ticketPattern    = regexp.MustCompile(`^M[0-9]+-[0-9]+$`)
)

// ParseRegistry decodes operations.yaml strictly (unknown keys fail) and
// checks its own rules: both lists sorted, no operation listed twice, every
// later entry with a milestone, tickets of the form M<n>-<n> that belong to
// their milestone.
func ParseRegistry(data []byte) (*Registry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var r Registry
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("operations.yaml: %w", err)
	}
	var problems []string
	if !slices.IsSorted(r.Enabled) {
		problems = append(problems, "enabled is not sorted")
	}
	if !slices.IsSortedFunc(r.Later, func(a, b LaterOperation) int { return strings.Compare(a.OperationID, b.OperationID) }) {
		problems = append(problems, "later is not sorted by operationId")
	}
	seen := map[string]bool{}
	for _, id := range r.AllIDs() {
		if id == "" {
			problems = append(problems, "an entry has no operationId")
			continue
		}
		if seen[id] {
			problems = append(problems, fmt.Sprintf("%s is listed more than once", id))
		}
		seen[id] = true
	}
	for _, l := range r.Later {
		if !milestonePattern.MatchString(l.Milestone) {
			problems = append(problems, fmt.Sprintf("%s: milestone %q is not of the form M<n>", l.OperationID, l.Milestone))
		}
		if l.Ticket != "" {
			if !ticketPattern.MatchString(l.Ticket) {
				problems = append(problems, fmt.Sprintf("%s: ticket %q is not of the form M<n>-<n>", l.OperationID, l.Ticket))
			} else if !strings.HasPrefix(l.Ticket, l.Milestone+"-") {
				problems = append(problems, fmt.Sprintf("%s: ticket %s is not in milestone %s", l.OperationID, l.Ticket, l.Milestone))
			}
		}
	}
	if len(problems) > 0 {
		return nil, errors.New("operations.yaml: " + strings.Join(problems, "; "))
	}
	return &r, nil
}

// AllIDs returns every operationId of both lists, in file order.
func (r *Registry) AllIDs() []string {
	ids := slices.Clone(r.Enabled)
	for _, l := range r.Later {
		ids = append(ids, l.OperationID)
	}
	return ids
}

// CheckAgainst compares the registry with the operationIds of the spec:
// every spec operation must be listed, and every listed ID must exist.
func (r *Registry) CheckAgainst(specIDs []string) error {
	listed := map[string]bool{}
	for _, id := range r.AllIDs() {
		listed[id] = true
	}
	inSpec := map[string]bool{}
	for _, id := range specIDs {
		inSpec[id] = true
	}
	var missing, unknown []string
	for _, id := range specIDs {
		if !listed[id] {
			missing = append(missing, id)
		}
	}
	for _, id := range r.AllIDs() {
		if !inSpec[id] {
			unknown = append(unknown, id)
		}
	}
	slices.Sort(missing)
	slices.Sort(unknown)
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "not listed in operations.yaml: "+strings.Join(missing, ", "))
	}
	if len(unknown) > 0 {
		problems = append(problems, "listed in operations.yaml but not in the spec: "+strings.Join(unknown, ", "))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// sortedIDs returns every operationId of both lists, sorted.
func sortedIDs(r *Registry) []string {
	ids := r.AllIDs()
	slices.Sort(ids)
	return ids
}
