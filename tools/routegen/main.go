// Command routegen generates the HTTP server layer of bothy from the
// contract. It reads api/openapi.yaml, services/server/api/operations.yaml
// and the oapi-codegen configuration services/server/api/codegen.yaml, and
// writes into services/server/api:
//
//   - openapi.gen.yaml: the spec with only the enabled operations and the
//     components they reference (embedded by package api for validation);
//   - api.gen.go: oapi-codegen's models, std-http server and strict server
//     for those operations;
//   - operations.gen.go: the table of enabled operations (method, path,
//     x-authz-action, rate limit class, CORS, public, Idempotency-Key).
//
// Run it from the tools module: cd tools && GOWORK=off go run ./routegen.
// With -out pointing elsewhere it writes there instead (make codegen-check
// uses a temporary folder and diffs).
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "routegen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("routegen", flag.ContinueOnError)
	spec := fs.String("spec", "../api/openapi.yaml", "the OpenAPI contract")
	registry := fs.String("operations", "../services/server/api/operations.yaml", "the enabled and later operations")
	config := fs.String("config", "../services/server/api/codegen.yaml", "the oapi-codegen configuration")
	out := fs.String("out", "../services/server/api", "the folder to write the generated files to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var in Inputs
	for _, f := range []struct {
		path string
		dst  *[]byte
	}{{*spec, &in.Spec}, {*registry, &in.Registry}, {*config, &in.Config}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		*f.dst = b
	}
	files, err := Generate(in)
	if err != nil {
		return err
	}
	// -out is a package folder of the repository (or a temporary folder of
	// make codegen-check): 0755 and 0644 are what git gives a clone, so the
	// generated files match a fresh checkout (the umask applies).
	if err := os.MkdirAll(*out, 0o755); err != nil { //nolint:gosec // G301: checked-in package folder, world-readable like every folder of the repository
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(*out, name), files[name], 0o644); err != nil { //nolint:gosec // G306: checked-in file, world-readable like every file of the repository
			return err
		}
	}
	return nil
}
