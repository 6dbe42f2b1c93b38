// Command adrindex writes docs/adr/README.md, the table of the architecture
// decision records (number, title, status, date), from the ADR files
// docs/adr/NNNN-*.md and their MADR 4 front matter (make adr-index).
//
// Usage:
//
//	adrindex [-dir docs/adr] [-check]
//
// With -check it writes nothing and fails when README.md differs from what
// it would write (make check). Exit status: 0 up to date or written, 1
// stale index or invalid ADR, 2 usage or I/O error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("adrindex", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "docs/adr", "ADR folder")
	check := fl.Bool("check", false, "fail when README.md is stale instead of writing it")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	entries, err := os.ReadDir(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "adrindex: %v\n", err)
		return 2
	}
	var adrs []ADR
	bad := 0
	for _, e := range entries {
		if e.IsDir() || !IsADRFile(e.Name()) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(*dir, e.Name()))
		if err != nil {
			fmt.Fprintf(stderr, "adrindex: %v\n", err)
			return 2
		}
		a, err := ParseADR(e.Name(), string(data))
		if err != nil {
			fmt.Fprintf(stderr, "adrindex: %v\n", err)
			bad++
			continue
		}
		adrs = append(adrs, a)
	}
	if bad > 0 {
		return 1
	}
	index, err := Render(adrs)
	if err != nil {
		fmt.Fprintf(stderr, "adrindex: %v\n", err)
		return 1
	}
	path := filepath.Join(*dir, "README.md")
	if *check {
		old, err := os.ReadFile(path)
		if err != nil || string(old) != index {
			fmt.Fprintf(stderr, "adrindex: %s is stale; run `make adr-index` and commit it\n", path)
			return 1
		}
		fmt.Fprintf(stdout, "adrindex: %s lists all %d ADRs\n", path, len(adrs))
		return 0
	}
	if err := os.WriteFile(path, []byte(index), 0o644); err != nil { //nolint:gosec // G306: a committed document
		fmt.Fprintf(stderr, "adrindex: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "adrindex: wrote %s (%d ADRs)\n", path, len(adrs))
	return 0
}
