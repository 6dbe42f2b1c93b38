// Command apitables writes the tables that docs take from the contract
// api/openapi.yaml (make api-tables):
//
//   - the problem code table (components.schemas.ProblemCode with its
//     x-problem-codes) into docs/spec/06-api.md section 5;
//   - the event type table (the x-webhooks entries with x-receive-action
//     and x-receivers) and the list of types apps cannot subscribe to into
//     docs/api/webhooks.md section 7.
//
// Each table sits between a BEGIN and an END marker comment; the text
// around the markers is the documents' own. With -check nothing is written
// and the command fails when a document differs from what the contract
// gives (make codegen-check).
//
// Usage: cd tools && GOWORK=off go run ./apitables [-check] [-spec F] [-errors-doc F] [-webhooks-doc F]
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	spec := flag.String("spec", "../api/openapi.yaml", "the OpenAPI contract")
	errorsDoc := flag.String("errors-doc", "../docs/spec/06-api.md", "the document that holds the problem code table")
	webhooksDoc := flag.String("webhooks-doc", "../docs/api/webhooks.md", "the document that holds the event type table")
	check := flag.Bool("check", false, "fail on drift instead of writing")
	flag.Parse()
	if err := run(*spec, *errorsDoc, *webhooksDoc, *check); err != nil {
		fmt.Fprintln(os.Stderr, "apitables:", err)
		os.Exit(1)
	}
}

func run(spec, errorsDoc, webhooksDoc string, check bool) error {
	data, err := os.ReadFile(spec)
	if err != nil {
		return err
	}
	t, err := Tables(data)
	if err != nil {
		return err
	}
	var drift []string
	for _, target := range []struct {
		path, name, body string
	}{
		{errorsDoc, "error-codes", t.ErrorCodes},
		{webhooksDoc, "event-types", t.EventTypes},
	} {
		old, err := os.ReadFile(target.path)
		if err != nil {
			return err
		}
		updated, err := Splice(string(old), target.name, target.body)
		if err != nil {
			return fmt.Errorf("%s: %w", target.path, err)
		}
		if updated == string(old) {
			continue
		}
		if check {
			drift = append(drift, target.path)
			continue
		}
		// A checked-in document: 0644 is what git gives every file of a
		// clone (WriteFile keeps the mode of an existing file anyway).
		if err := os.WriteFile(target.path, []byte(updated), 0o644); err != nil { //nolint:gosec // G306: checked-in file, world-readable like every file of the repository
			return err
		}
	}
	if len(drift) > 0 {
		return fmt.Errorf("generated tables are out of date in %v: run make api-tables", drift)
	}
	return nil
}
