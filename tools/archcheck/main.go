// Command archcheck enforces the module dependency rules of
// services/server/architecture/modules.yaml (make arch) over the output of
// `go list -e -json ./...` in the Go module:
//
//   - a module imports another module only through its port package
//     (internal/<module> itself, never internal/<module>/domain, app or
//     adapters) and only along the edges modules.yaml allows;
//   - the kernel imports nothing of platform or the modules; platform
//     imports no module;
//   - domain and port packages import only the standard library and
//     internal/kernel (ports also the ports they use; domain packages also
//     the domain_libraries modules.yaml lists);
//   - use cases (app) never import their adapters;
//   - a module's inside rules forbid imports between its own packages
//     beyond these layers (internal/apps/domain never imports its
//     subpackage webhook);
//   - restricted packages (the generated api) are imported only by the
//     importers modules.yaml names; test-only packages only by tests;
//   - every package of the Go module belongs to a module of modules.yaml;
//   - the production code of the business modules runs SQL only through
//     the sqlc packages, except in the functions inline_sql lists, and
//     every listed function still runs inline SQL (ADR 0078).
//
// Usage:
//
//	archcheck [-C dir] [-config file]
//
// Exit status: 0 clean, 1 violations, 2 usage, configuration or go list
// error.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("archcheck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("C", "services/server", "Go module directory")
	cfgPath := fl.String("config", "", "modules.yaml (default: DIR/architecture/modules.yaml)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" {
		*cfgPath = filepath.Join(*dir, "architecture", "modules.yaml")
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "archcheck: %v\n", err)
		return 2
	}
	data, err := os.ReadFile(*cfgPath)
	if err != nil {
		return fail(err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return fail(err)
	}
	pkgs, err := goList(*dir)
	if err != nil {
		return fail(err)
	}
	vs := cfg.Check(pkgs)
	sqlVs, err := cfg.CheckSQL(pkgs)
	if err != nil {
		return fail(err)
	}
	vs = append(vs, sqlVs...)
	for _, v := range vs {
		fmt.Fprintf(stdout, "arch: %s\n", v)
	}
	if len(vs) > 0 {
		fmt.Fprintf(stderr, "archcheck: %d violation(s) of %s in %d packages\n", len(vs), *cfgPath, len(pkgs))
		return 1
	}
	fmt.Fprintf(stdout, "archcheck: %d packages follow %s\n", len(pkgs), *cfgPath)
	return 0
}

// goList runs `go list -e -json ./...` in dir and decodes its stream.
func goList(dir string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Dir,GoFiles,Imports,TestImports,XTestImports,Error", "./...")
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list in %s: %w: %s", dir, err, errOut.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(&out)
	for {
		var p Package
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("go list found no package in %s", dir)
	}
	return pkgs, nil
}
