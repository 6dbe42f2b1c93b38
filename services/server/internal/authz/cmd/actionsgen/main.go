// Command actionsgen renders the action catalogue of internal/authz/domain
// into docs/spec/actions.yaml and into the generated tables of
// docs/spec/05-actions.md (ADR 0049). `make actions` runs it; the test of
// this package fails when the committed files differ from what it would
// write, so `make test` catches a catalogue change without regeneration.
//
// Usage:
//
//	go run ./internal/authz/cmd/actionsgen -root /path/to/repository
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// The generated files, relative to the repository root.
const (
	yamlPath    = "docs/spec/actions.yaml"
	chapterPath = "docs/spec/05-actions.md"
)

func main() {
	root := flag.String("root", "", "the repository root (the folder with go.work)")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "actionsgen: -root is required")
		os.Exit(2)
	}
	files, err := generate(*root)
	if err == nil {
		err = write(*root, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "actionsgen:", err)
		os.Exit(1)
	}
}

// generate returns the new content of every generated file by path. The
// chapter is read from root because only its marked blocks are generated.
func generate(root string) (map[string][]byte, error) {
	y, err := renderYAML()
	if err != nil {
		return nil, err
	}
	chapter, err := os.ReadFile(filepath.Join(root, chapterPath))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", chapterPath, err)
	}
	tables := renderTables()
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if chapter, err = splice(chapter, name, tables[name]); err != nil {
			return nil, fmt.Errorf("%s: %w", chapterPath, err)
		}
	}
	return map[string][]byte{yamlPath: y, chapterPath: chapter}, nil
}

func write(root string, files map[string][]byte) error {
	for path, content := range files {
		// A checked-in file: 0644 is what git gives every file of a clone, so
		// the regenerated file matches a fresh checkout (the umask applies).
		if err := os.WriteFile(filepath.Join(root, path), content, 0o644); err != nil { //nolint:gosec // G306: checked-in file, world-readable like every file of the repository
			return err
		}
	}
	return nil
}

// errMarkers: a block's begin and end markers are missing or out of order.
var errMarkers = errors.New("generated block markers missing or out of order")

// splice replaces the lines between the markers of block name with
// content (which ends in a newline).
func splice(doc []byte, name, content string) ([]byte, error) {
	begin := []byte("<!-- generated:" + name + ":begin -->\n")
	end := []byte("<!-- generated:" + name + ":end -->")
	i := bytes.Index(doc, begin)
	j := bytes.Index(doc, end)
	if i < 0 || j < i+len(begin) || bytes.Count(doc, begin) != 1 || bytes.Count(doc, end) != 1 {
		return nil, fmt.Errorf("%w: %s", errMarkers, name)
	}
	out := make([]byte, 0, len(doc)+len(content))
	out = append(out, doc[:i+len(begin)]...)
	out = append(out, content...)
	out = append(out, doc[j:]...)
	return out, nil
}
