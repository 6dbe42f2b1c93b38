// Package api is the HTTP layer generated from the contract
// api/openapi.yaml: the strict server interface, the Go 1.22 ServeMux
// server and the models of the enabled operations (api.gen.go), the table
// of those operations (operations.gen.go, Operations, Lookup), the filtered
// spec they come from (Spec), the request validation middleware
// (NewValidator) and the route registration check (VerifyRegistrations).
//
// Which operations are enabled is decided in operations.yaml; tools/routegen
// writes every *.gen.* file of this folder (make codegen). Module adapters
// (internal/<module>/adapters/httpapi) implement the strict handlers; the
// role assembly composes them into one StrictServerInterface.
package api
