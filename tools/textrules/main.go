// Command textrules checks the text rules of the repository (make lint):
//
//   - no en dash (U+2013) and no em dash (U+2014) in any file;
//   - white label: every host name, e-mail domain and IP literal is
//     example.com or one of its subdomains, localhost, a documentation or
//     special-purpose address (127.0.0.1, 192.0.2.0/24, 2001:db8::/32,
//     private ranges for egress tests, ...) or on the allow list;
//   - no Go file cites a ticket's design note ("Design" and "note" with a
//     number): the tickets are not in the repository, so a comment cites
//     an ADR, a docs/DECISIONS.md row or a docs/spec section (D-CL-17).
//
// Usage:
//
//	textrules [-C dir] [-allow file] [file ...]
//
// Without file arguments it reads every file git knows in dir: tracked
// files and untracked files that .gitignore does not exclude. It prints one
// line per finding (path:line: rule: detail) and exits with status 1 when
// there is any, 2 on a usage or I/O error.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("textrules", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("C", ".", "repository root")
	allowPath := fl.String("allow", "quality/whitelabel-allow.txt", "white-label allow list, relative to the root")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	ap := *allowPath
	if !filepath.IsAbs(ap) {
		ap = filepath.Join(*dir, ap)
	}
	allowData, err := os.ReadFile(ap)
	if err != nil {
		fmt.Fprintf(stderr, "textrules: %v\n", err)
		return 2
	}
	allow, err := ParseAllowList(allowData)
	if err != nil {
		fmt.Fprintf(stderr, "textrules: %s: %v\n", *allowPath, err)
		return 2
	}
	files := fl.Args()
	if len(files) == 0 {
		if files, err = gitFiles(*dir); err != nil {
			fmt.Fprintf(stderr, "textrules: %v\n", err)
			return 2
		}
	}
	count := 0
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(*dir, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			fmt.Fprintf(stderr, "textrules: %v\n", err)
			return 2
		}
		for _, fd := range CheckFile(filepath.ToSlash(f), data, allow) {
			fmt.Fprintln(stdout, fd)
			count++
		}
	}
	if count > 0 {
		fmt.Fprintf(stderr, "textrules: %d finding(s) in %d file(s) checked\n", count, len(files))
		return 1
	}
	return 0
}

// gitFiles lists the tracked and the untracked, not ignored files of dir.
func gitFiles(dir string) ([]string, error) {
	cmd := exec.Command("git", "-C", dir, //nolint:gosec // G204: dir is the repository the caller names
		"ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(out.String(), "\x00") {
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	return files, nil
}
