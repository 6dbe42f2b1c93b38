package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RuntimeRole is the database role the server runs as: DML only, never DDL.
const RuntimeRole = "bothy_app"

// Problem is one finding of the migration lint.
type Problem struct {
	// File is the migration file name ("" for the directory as a whole).
	File string
	// Line is the 1-based line of the statement, 0 when not line bound.
	Line int
	// Msg says what is wrong and how to fix it.
	Msg string
}

// String formats the problem as file:line: message.
func (p Problem) String() string {
	switch {
	case p.File == "":
		return p.Msg
	case p.Line == 0:
		return p.File + ": " + p.Msg
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

var (
	fileRE = regexp.MustCompile(`^([0-9]{5})_([a-z0-9]+(?:_[a-z0-9]+)*)\.sql$`)
	// identRE matches one possibly schema-qualified, possibly quoted name.
	identPart   = `(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`
	identRE     = identPart + `(?:\.` + identPart + `)?`
	createRE    = regexp.MustCompile(`(?i)^CREATE (?:(?:GLOBAL |LOCAL )?(?:TEMPORARY |TEMP )|UNLOGGED )?TABLE (?:IF NOT EXISTS )?(` + identRE + `)(.*)$`)
	partitionRE = regexp.MustCompile(`(?i)^ ?PARTITION OF `)
	grantRE     = regexp.MustCompile(`(?i)^GRANT (.+?)(?: ON (.+?))? TO (.+?)(?: WITH (?:GRANT|ADMIN|INHERIT|SET) .*)?$`)
	defaultRE   = regexp.MustCompile(`(?i)^ALTER DEFAULT PRIVILEGES .*?GRANT (.+?) ON (.+?) TO (.+?)(?: WITH GRANT OPTION)?$`)
	ownerRE     = regexp.MustCompile(`(?i)^ALTER .* OWNER TO (.+)$`)
	alterRoleRE = regexp.MustCompile(`(?i)^ALTER (?:ROLE|USER) (\S+) (?:WITH )?(.*)$`)
	commentRE   = regexp.MustCompile(`(?i)^COMMENT ON TABLE (` + identRE + `) IS ('.*')$`)
	retentionRE = regexp.MustCompile(`retention: ?([a-z_]+)`)
	// ddlPrivileges may never be granted to the runtime role: each lets it
	// change the schema or its integrity (ALL includes them all).
	ddlPrivileges = []string{"ALL", "CREATE", "TRUNCATE", "REFERENCES", "TRIGGER", "MAINTAIN"}
	// roleAttrs are role attributes that give DDL or bypass the grants.
	roleAttrs = regexp.MustCompile(`(?i)\b(SUPERUSER|CREATEDB|CREATEROLE|BYPASSRLS|REPLICATION)\b`)
)

// LintFile checks one migration: the goose sections, and in the Up section
// the grants to the runtime role and the retention comment of every table.
// classes are the allowed retention classes.
func LintFile(name, src string, classes map[string]bool) []Problem {
	var out []Problem
	add := func(line int, format string, args ...any) {
		out = append(out, Problem{File: name, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	s := Parse(src)
	switch {
	case s.UpMarkers != 1 || s.DownMarkers != 1:
		add(0, "needs exactly one `-- +goose Up` and one `-- +goose Down` (found %d and %d)", s.UpMarkers, s.DownMarkers)
	case s.DownBeforeUp:
		add(0, "`-- +goose Up` must come before `-- +goose Down`")
	}

	type table struct {
		line             int
		grantAt, comment int // statement index of the grant and comment, -1 if none
		class            string
	}
	tables := map[string]*table{}
	var order []string
	for _, st := range s.Up {
		if m := createRE.FindStringSubmatch(st.Text); m != nil {
			if partitionRE.MatchString(m[2]) {
				continue // a partition inherits its parent's grants and class
			}
			n := normName(m[1])
			if _, dup := tables[n]; !dup {
				order = append(order, n)
			}
			tables[n] = &table{line: st.Line, grantAt: -1, comment: -1}
		}
	}
	for i, st := range s.Up {
		if m := grantRE.FindStringSubmatch(st.Text); m != nil && hasRole(m[3]) {
			if m[2] == "" {
				add(st.Line, "grants a role to %s: membership gives it that role's DDL rights", RuntimeRole)
				continue
			}
			if p := ddlIn(m[1]); p != "" {
				add(st.Line, "grants %s to %s: the runtime role gets DML only (SELECT, INSERT, UPDATE, DELETE, USAGE)", p, RuntimeRole)
			}
			for _, n := range grantedTables(m[2]) {
				if t, ok := tables[n]; ok && t.grantAt < 0 {
					t.grantAt = i
				}
			}
		}
		if m := defaultRE.FindStringSubmatch(st.Text); m != nil && hasRole(m[3]) {
			if p := ddlIn(m[1]); p != "" {
				add(st.Line, "default privileges grant %s to %s: the runtime role gets DML only", p, RuntimeRole)
			}
		}
		if m := ownerRE.FindStringSubmatch(st.Text); m != nil && hasRole(m[1]) {
			add(st.Line, "makes %s an owner: owners may change the schema", RuntimeRole)
		}
		if m := alterRoleRE.FindStringSubmatch(st.Text); m != nil && normName(m[1]) == RuntimeRole {
			if a := roleAttrs.FindString(m[2]); a != "" {
				add(st.Line, "gives %s the attribute %s", RuntimeRole, strings.ToUpper(a))
			}
		}
		if m := commentRE.FindStringSubmatch(st.Text); m != nil {
			t, ok := tables[normName(m[1])]
			if !ok {
				continue
			}
			text, _ := unquoteString(m[2])
			t.comment = i
			if c := retentionRE.FindStringSubmatch(text); c != nil {
				t.class = c[1]
			}
		}
	}
	for _, n := range order {
		t := tables[n]
		if t.grantAt < 0 {
			add(t.line, "table %s has no GRANT ... ON %s TO %s after its CREATE TABLE in this file", n, n, RuntimeRole)
		}
		switch {
		case t.comment < 0:
			add(t.line, "table %s has no COMMENT ON TABLE %s IS '... retention: <class> ...' in this file", n, n)
		case t.class == "":
			add(t.line, "the comment of table %s names no retention class (retention: <class>)", n)
		case !classes[t.class]:
			add(t.line, "table %s has the unknown retention class %q (allowed: %s)", n, t.class, strings.Join(sortedKeys(classes), ", "))
		}
	}
	return out
}

// hasRole reports whether the grantee list names the runtime role.
func hasRole(grantees string) bool {
	for _, g := range strings.Split(grantees, ",") {
		if normName(strings.TrimPrefix(strings.TrimSpace(g), "GROUP ")) == RuntimeRole {
			return true
		}
	}
	return false
}

// ddlIn returns the first DDL-like privilege of a privilege list, or "".
func ddlIn(privs string) string {
	for _, p := range strings.Split(privs, ",") {
		word := strings.ToUpper(strings.Fields(strings.TrimSpace(p) + " x")[0])
		for _, d := range ddlPrivileges {
			if word == d {
				return d
			}
		}
	}
	return ""
}

// grantedTables returns the tables of a GRANT's ON clause: "t", "TABLE a,
// b", "s.t". Sequences, schemas, functions and ALL TABLES IN SCHEMA name no
// table.
func grantedTables(on string) []string {
	f := strings.Fields(on)
	if len(f) == 0 {
		return nil
	}
	switch strings.ToUpper(f[0]) {
	case "TABLE":
		on = strings.TrimSpace(on[len(f[0]):])
	case "ALL", "SEQUENCE", "SCHEMA", "FUNCTION", "PROCEDURE", "ROUTINE", "DATABASE", "DOMAIN", "TYPE", "LANGUAGE", "LARGE", "FOREIGN", "TABLESPACE", "PARAMETER":
		return nil
	}
	var out []string
	for _, n := range strings.Split(on, ",") {
		out = append(out, normName(n))
	}
	return out
}

// LintNames checks the file names and numbers of the migrations: five
// digits, a snake_case name and unique numbers. Gaps are allowed: each
// module reserves a range of numbers (00010-00019, ...), so parallel work
// never collides. names are the .sql files of the directory.
func LintNames(names []string) []Problem {
	var out []Problem
	seen := map[int]string{}
	for _, n := range names {
		m := fileRE.FindStringSubmatch(n)
		if m == nil {
			out = append(out, Problem{File: n, Msg: "name must be NNNNN_<snake_case>.sql (five digits, lower case, underscores)"})
			continue
		}
		num, _ := strconv.Atoi(m[1])
		if num == 0 {
			out = append(out, Problem{File: n, Msg: "number 00000 is not a goose version; start at 00001"})
			continue
		}
		if other, dup := seen[num]; dup {
			out = append(out, Problem{File: n, Msg: "number " + m[1] + " is used by " + other + " too"})
			continue
		}
		seen[num] = n
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
