// Command apicheck verifies the conventions of the HTTP contract
// api/openapi.yaml that a generic OpenAPI linter does not know (make
// api-checks):
//
//   - every operation (paths and x-webhooks) has operationId, declared tags,
//     summary, description and x-authz-action;
//   - every operation under paths documents the shared problem responses of
//     its kind: 401 and 403 when authenticated, 404 with path IDs, 400 with a
//     body or parameters, 413 with a body, 409 with Idempotency-Key, 429
//     with a rate limit class, each as a $ref to components/responses;
//   - request bodies are JSON objects with additionalProperties: false at
//     every level;
//   - every x-webhooks entry is a delivery: x-authz-action
//     webhook_out.deliver, x-receive-action, x-receivers, the webhook
//     headers, the EventEnvelope body, the responses 2XX, 410 and 429, one
//     entry per EventType and an example of its own type;
//   - the problem code table (x-problem-codes) matches the ProblemCode enum;
//   - every schema is used, no schema uses nullable, every example
//     validates against its schema;
//   - examples use example.com hosts and addresses only, and no text has an
//     en or em dash.
//
// Usage: cd tools && GOWORK=off go run ./apicheck [-spec ../api/openapi.yaml]
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	spec := flag.String("spec", "../api/openapi.yaml", "the OpenAPI contract")
	flag.Parse()
	data, err := os.ReadFile(*spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
	problems, err := Check(data)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "apicheck: %d problems in %s\n", len(problems), *spec)
		os.Exit(1)
	}
}
