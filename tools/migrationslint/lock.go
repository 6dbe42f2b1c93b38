package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// LockFile is the name of the checksum file beside the migrations, in the
// format of sha256sum: "<hex>  <file>" per line, sorted by file name.
const LockFile = "migrations.sha256"

var lockLineRE = regexp.MustCompile(`^([0-9a-f]{64}) [ *](\S+)$`)

// Lock maps a migration file name to its SHA-256 in hex.
type Lock map[string]string

// ParseLock reads a lock file. Malformed lines are problems, not silently
// skipped lines.
func ParseLock(data string) (Lock, []Problem) {
	l := Lock{}
	var probs []Problem
	sc := bufio.NewScanner(strings.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		m := lockLineRE.FindStringSubmatch(line)
		if m == nil {
			probs = append(probs, Problem{File: LockFile, Line: n, Msg: "not a sha256sum line (<64 hex digits>  <file>)"})
			continue
		}
		l[m[2]] = m[1]
	}
	return l, probs
}

// Format renders the lock in sha256sum's format, sorted by file name.
func (l Lock) Format() string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", l[n], n)
	}
	return b.String()
}

// Sum returns the SHA-256 of data in hex.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// CheckLock compares the lock file with the migrations (sums maps each file
// to its current hash) and with the lock of git HEAD (merged, nil when HEAD
// has none): every file has its line and its current hash, no line names a
// missing file, and no line of HEAD's lock changed or disappeared, because a
// merged migration is never edited.
func CheckLock(current, merged Lock, sums map[string]string) []Problem {
	var out []Problem
	for _, n := range sortedKeysOf(sums) {
		got, ok := current[n]
		switch {
		case !ok:
			out = append(out, Problem{File: n, Msg: "has no line in " + LockFile + "; run `make migrations-lock`"})
		case got != sums[n] && merged[n] == got:
			out = append(out, Problem{File: n, Msg: "was changed after it was merged (its hash differs from " + LockFile + " at git HEAD); never edit a merged migration: revert it and add a new one"})
		case got != sums[n]:
			out = append(out, Problem{File: n, Msg: "does not match its line in " + LockFile + "; run `make migrations-lock` (only new, unmerged migrations may change)"})
		}
	}
	for _, n := range sortedKeysOf(current) {
		if _, ok := sums[n]; !ok {
			out = append(out, Problem{File: LockFile, Msg: "names " + n + ", which does not exist; a merged migration is never removed"})
		}
	}
	for _, n := range sortedKeysOf(merged) {
		switch got, ok := current[n]; {
		case !ok:
			out = append(out, Problem{File: LockFile, Msg: "lost the line of the merged migration " + n})
		case got != merged[n]:
			out = append(out, Problem{File: n, Msg: "its line in " + LockFile + " differs from git HEAD's: a merged migration and its hash never change"})
		}
	}
	return out
}

// NewLock is what `make migrations-lock` writes: the lines of HEAD's lock
// for merged migrations, unchanged, and fresh hashes for every other file.
func NewLock(merged Lock, sums map[string]string) Lock {
	l := Lock{}
	for n, s := range sums {
		if m, ok := merged[n]; ok {
			l[n] = m
		} else {
			l[n] = s
		}
	}
	return l
}

// headLock reads the lock file of git HEAD for dir. ok is false when dir is
// not in a git work tree or HEAD has no lock file yet.
func headLock(dir string) (Lock, bool, error) {
	out, err := exec.Command("git", "-C", dir, "show", "HEAD:./"+LockFile).Output() //nolint:gosec // G204: dir is the migrations directory the caller names
	if err != nil {
		return nil, false, nil //nolint:nilerr // no repository, no HEAD or no lock at HEAD: nothing merged to compare with
	}
	l, probs := ParseLock(string(out))
	if len(probs) > 0 {
		return nil, false, fmt.Errorf("%s at git HEAD of %s is malformed", LockFile, filepath.Clean(dir))
	}
	return l, true, nil
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
