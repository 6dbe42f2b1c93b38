// Command migrationslint checks the goose migrations of services/server
// (make migrations-lint) and writes their checksums (make migrations-lock).
//
// Checks:
//
//   - every .sql file is named NNNNN_<snake_case>.sql with a unique number
//     (gaps are allowed: modules reserve number ranges);
//   - every file has one "-- +goose Up" followed by one "-- +goose Down";
//   - every CREATE TABLE of the Up section is followed in the same file by
//     a GRANT on it to bothy_app and by COMMENT ON TABLE ... IS '...
//     retention: <class> ...' with a class from the classes file;
//   - nothing grants bothy_app a DDL-like privilege (ALL, CREATE, TRUNCATE,
//     REFERENCES, TRIGGER, MAINTAIN), a role, ownership or a role attribute;
//   - migrations.sha256 matches the files, and every line of the
//     migrations.sha256 of git HEAD is unchanged (merged migrations are
//     never edited).
//
// Usage:
//
//	migrationslint [-dir DIR] [-classes FILE] [-lock]
//
// With -lock it rewrites migrations.sha256 instead: lines of merged
// migrations (in HEAD's lock) stay as they are, other files get their
// current hash. Exit status: 0 clean, 1 problems found, 2 usage or I/O
// error.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("migrationslint", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "services/server/migrations", "migrations directory")
	classesPath := fl.String("classes", "quality/retention-classes.txt", "allowed retention classes, one per line")
	lock := fl.Bool("lock", false, "write migrations.sha256 instead of checking")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "migrationslint: %v\n", err)
		return 2
	}
	entries, err := os.ReadDir(*dir)
	if err != nil {
		return fail(err)
	}
	files := map[string]string{}
	sums := map[string]string{}
	var names []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(*dir, e.Name()))
		if err != nil {
			return fail(err)
		}
		names = append(names, e.Name())
		files[e.Name()] = string(data)
		sums[e.Name()] = Sum(data)
	}
	sort.Strings(names)
	merged, _, err := headLock(*dir)
	if err != nil {
		return fail(err)
	}
	lockPath := filepath.Join(*dir, LockFile)

	if *lock {
		if err := os.WriteFile(lockPath, []byte(NewLock(merged, sums).Format()), 0o644); err != nil { //nolint:gosec // G306: the lock file is committed, not secret
			return fail(err)
		}
		fmt.Fprintf(stdout, "migrationslint: wrote %s (%d migrations)\n", lockPath, len(sums))
		return 0
	}

	classes, err := readClasses(*classesPath)
	if err != nil {
		return fail(err)
	}
	probs := LintNames(names)
	for _, n := range names {
		probs = append(probs, LintFile(n, files[n], classes)...)
	}
	data, err := os.ReadFile(lockPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		probs = append(probs, Problem{File: LockFile, Msg: "is missing; run `make migrations-lock`"})
	case err != nil:
		return fail(err)
	default:
		current, lp := ParseLock(string(data))
		probs = append(probs, lp...)
		probs = append(probs, CheckLock(current, merged, sums)...)
	}
	for _, p := range probs {
		fmt.Fprintln(stdout, p)
	}
	if len(probs) > 0 {
		fmt.Fprintf(stderr, "migrationslint: %d problem(s) in %s\n", len(probs), *dir)
		return 1
	}
	fmt.Fprintf(stdout, "migrationslint: %d migrations ok\n", len(names))
	return 0
}

// readClasses reads the retention classes: the first word of every line
// that is neither blank nor a # comment.
func readClasses(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			out[f[0]] = true
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no retention class", path)
	}
	return out, sc.Err()
}
