package main

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
)

// queryNames maps the shape of each query of the server (sqlShape) to the
// name sqlc gave it (D-BE-19), so the report lists a top statement by its
// name: pg_stat_statements keeps a statement's text without the comment
// before it, where sqlc writes the name. A nil queryNames names nothing.
type queryNames map[string]string

// generatedQuery finds a query in a file sqlc generated: its name and its
// text as the server gets it, after the comment that names it.
var generatedQuery = regexp.MustCompile("(?s)= `-- name: (\\w+) :\\w+\\n(.*?)`")

// readQueryNames reads the queries of every file sqlc generated under root
// (the server module's internal directory: *.sql.gen.go of each module's
// adapters/postgres/db). Two queries of the same shape share the entry,
// their names joined by " or ". It fails when root holds no such file.
func readQueryNames(root string) (queryNames, error) {
	dir, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("reading the query names: %w", err)
	}
	defer dir.Close()
	tree := dir.FS()
	names := queryNames{}
	files := 0
	err = fs.WalkDir(tree, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sql.gen.go") {
			return err
		}
		text, err := fs.ReadFile(tree, path)
		if err != nil {
			return err
		}
		files++
		for _, m := range generatedQuery.FindAllSubmatch(text, -1) {
			name, shape := string(m[1]), sqlShape(string(m[2]))
			if other, ok := names[shape]; ok && other != name {
				name = other + " or " + name
			}
			names[shape] = name
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the query names: %w", err)
	}
	if files == 0 {
		return nil, fmt.Errorf("reading the query names: no file of sqlc's (*.sql.gen.go) under %s", root)
	}
	return names, nil
}

// of returns the name of the query whose text pg_stat_statements kept as
// query, or "" when no query file has it.
func (n queryNames) of(query string) string { return n[sqlShape(query)] }

// sqlShape is s without what pg_stat_statements changes or drops: its
// comments go, its runs of white space become one space, every parameter
// ($1) and constant (a number, a quoted string, true, false, null)
// becomes "?", since pg_stat_statements keeps a constant as a parameter
// numbered after the client's, and a parenthesized list of them "(?)".
func sqlShape(s string) string {
	var b strings.Builder
	space := false
	emit := func(tok string) {
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(tok)
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			i++
		case strings.HasPrefix(s[i:], "--"):
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				end = len(s) - i
			}
			space = true
			i += end
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				end = len(s) - i - 4
			}
			space = true
			i += end + 4
		case c == '\'':
			// A quoted string; '' inside it is a quote.
			j := i + 1
			for j < len(s) && (s[j] != '\'' || j+1 < len(s) && s[j+1] == '\'') {
				if s[j] == '\'' {
					j++
				}
				j++
			}
			emit("?")
			i = j + 1
		case wordByte(c) || c == '$':
			j := i + 1
			for j < len(s) && (wordByte(s[j]) || s[j] == '.' && isDigits(s[i:j])) {
				j++
			}
			word := s[i:j]
			switch {
			case isDigits(strings.Replace(strings.TrimPrefix(word, "$"), ".", "", 1)):
				emit("?")
			case strings.EqualFold(word, "true"), strings.EqualFold(word, "false"), strings.EqualFold(word, "null"):
				emit("?")
			default:
				emit(word)
			}
			i = j
		default:
			emit(string(c))
			i++
		}
	}
	shape := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(b.String()), ";"))
	return constantList.ReplaceAllString(shape, "(?)")
}

// constantList is a parenthesized list of constants in a shape, which
// PostgreSQL 18's pg_stat_statements keeps as one ("IN ($3 /*, ... */)").
var constantList = regexp.MustCompile(`\( ?\?( ?, ?\?)* ?\)`)

// wordByte reports whether c belongs to a word of SQL: a keyword, a name
// or a number.
func wordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isDigits reports whether s is one or more decimal digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
