package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"bothy/tools/internal/specyaml"
)

// Generated holds the Markdown of the generated sections.
type Generated struct {
	// ErrorCodes is the problem code table of docs/spec/06-api.md section 5.
	ErrorCodes string
	// EventTypes is the event type table of docs/api/webhooks.md section 7.
	EventTypes string
}

// Tables renders the generated sections from the contract.
func Tables(spec []byte) (Generated, error) {
	doc, err := specyaml.Parse(spec)
	if err != nil {
		return Generated{}, err
	}
	root := specyaml.Root(doc)
	codes := specyaml.Path(root, "components", "schemas", "ProblemCode", "x-problem-codes")
	if codes == nil {
		return Generated{}, errors.New("spec: components.schemas.ProblemCode.x-problem-codes is missing")
	}
	var b strings.Builder
	b.WriteString("| Code | HTTP status | Reasons | Meaning |\n|---|---|---|---|\n")
	for _, p := range specyaml.Pairs(codes) {
		reasons := specyaml.Strings(specyaml.Get(p.Value, "reasons"))
		for i, r := range reasons {
			reasons[i] = "`" + r + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", p.Key,
			specyaml.Scalar(specyaml.Get(p.Value, "status")),
			strings.Join(reasons, ", "),
			cell(specyaml.Scalar(specyaml.Get(p.Value, "description"))))
	}
	var g Generated
	g.ErrorCodes = b.String()

	hooks := specyaml.Get(root, specyaml.WebhooksKey)
	if hooks == nil {
		return Generated{}, errors.New("spec: x-webhooks is missing")
	}
	b.Reset()
	b.WriteString("| Event type | Receive action | Receivers | Subscribable by apps |\n|---|---|---|---|\n")
	var notSubscribable []string
	for _, p := range specyaml.Pairs(hooks) {
		op := specyaml.Get(p.Value, "post")
		if op == nil {
			return Generated{}, fmt.Errorf("spec: x-webhooks %s has no post operation", p.Key)
		}
		receivers := specyaml.Strings(specyaml.Get(op, "x-receivers"))
		action := specyaml.Scalar(specyaml.Get(op, "x-receive-action"))
		if len(receivers) == 0 || action == "" {
			return Generated{}, fmt.Errorf("spec: x-webhooks %s lacks x-receivers or x-receive-action", p.Key)
		}
		subscribable := "yes"
		if !slices.Contains(receivers, "app") {
			subscribable = "no"
			notSubscribable = append(notSubscribable, fmt.Sprintf("- `%s`: receivers %s only.\n", p.Key, strings.Join(receivers, ", ")))
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", p.Key, action, strings.Join(receivers, ", "), subscribable)
	}
	if len(notSubscribable) > 0 {
		b.WriteString("\nNot subscribable by apps:\n\n")
		for _, line := range notSubscribable {
			b.WriteString(line)
		}
	}
	g.EventTypes = b.String()
	return g, nil
}

// cell flattens a description into one table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

// Markers of a generated section named name.
func markers(name string) (begin, end string) {
	return "<!-- BEGIN GENERATED " + name + " (make api-tables, from api/openapi.yaml) -->",
		"<!-- END GENERATED " + name + " -->"
}

// Splice replaces the text between the markers of section name in doc with
// body. The markers must each appear exactly once, begin before end.
func Splice(doc, name, body string) (string, error) {
	begin, end := markers(name)
	if strings.Count(doc, begin) != 1 || strings.Count(doc, end) != 1 {
		return "", fmt.Errorf("the markers of %s must appear exactly once: %s ... %s", name, begin, end)
	}
	i := strings.Index(doc, begin) + len(begin)
	j := strings.Index(doc, end)
	if j < i {
		return "", fmt.Errorf("the end marker of %s comes before its begin marker", name)
	}
	return doc[:i] + "\n\n" + body + "\n" + doc[j:], nil
}
