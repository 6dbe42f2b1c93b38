package main

import (
	"strings"
)

// Statement is one SQL statement of a migration with comments removed and
// white space collapsed to single spaces.
type Statement struct {
	// Text is the normalised statement without the closing semicolon.
	Text string
	// Line is the 1-based line on which the statement starts.
	Line int
}

// Sections are the statements of the two goose sections of a migration.
type Sections struct {
	Up, Down []Statement
	// UpMarkers and DownMarkers count the "-- +goose Up" and
	// "-- +goose Down" annotations; DownBeforeUp is set when Down comes
	// first.
	UpMarkers, DownMarkers int
	DownBeforeUp           bool
}

// Parse splits a goose migration into its Up and Down statements. It
// understands line and block comments, single-quoted strings (with ”),
// quoted identifiers and dollar-quoted bodies, so a semicolon inside a
// function body does not end a statement.
func Parse(src string) Sections {
	var s Sections
	section := 0 // 0 before any marker, 1 Up, 2 Down
	var cur strings.Builder
	curLine, line := 0, 1
	flush := func() {
		text := strings.Join(strings.Fields(cur.String()), " ")
		cur.Reset()
		if text == "" {
			return
		}
		st := Statement{Text: text, Line: curLine}
		if section == 2 {
			s.Down = append(s.Down, st)
		} else {
			s.Up = append(s.Up, st)
		}
	}
	emit := func(b byte) {
		if cur.Len() == 0 && b != ' ' && b != '\n' && b != '\t' && b != '\r' {
			curLine = line
		}
		if cur.Len() > 0 || (b != ' ' && b != '\n' && b != '\t' && b != '\r') {
			cur.WriteByte(b)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			line++
			emit(' ')
		case c == '-' && strings.HasPrefix(src[i:], "--"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			comment := strings.Fields(src[i+2 : i+end])
			if len(comment) >= 2 && comment[0] == "+goose" {
				switch strings.ToLower(comment[1]) {
				case "up":
					flush()
					s.UpMarkers++
					section = 1
				case "down":
					flush()
					s.DownMarkers++
					if section == 0 {
						s.DownBeforeUp = true
					}
					section = 2
				}
			}
			i += end - 1
			emit(' ')
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 3
			emit(' ')
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(src) {
				if src[j] == c {
					if j+1 < len(src) && src[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(src) {
				j = len(src) - 1
			}
			for k := i; k <= j; k++ {
				if src[k] == '\n' {
					line++
				}
				emit(src[k])
			}
			i = j
		case c == '$':
			tag := dollarTag(src[i:])
			if tag == "" {
				emit(c)
				continue
			}
			end := strings.Index(src[i+len(tag):], tag)
			if end < 0 {
				end = len(src) - i - len(tag)
			} else {
				end += len(tag)
			}
			body := src[i : i+len(tag)+end]
			line += strings.Count(body, "\n")
			for k := 0; k < len(body); k++ {
				emit(body[k])
			}
			i += len(body) - 1
		case c == ';':
			flush()
		default:
			emit(c)
		}
	}
	flush()
	return s
}

// dollarTag returns the opening $tag$ at the start of s, or "".
func dollarTag(s string) string {
	for j := 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '$':
			return s[:j+1]
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 1 && c >= '0' && c <= '9':
		default:
			return ""
		}
	}
	return ""
}

// unquoteString returns the content of a single-quoted SQL string literal
// (” becomes '); s starts at the opening quote.
func unquoteString(s string) (string, bool) {
	if !strings.HasPrefix(s, "'") {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), true
		}
		b.WriteByte(s[i])
	}
	return "", false
}

// normName turns a possibly schema-qualified, possibly quoted table name into
// the unqualified form used to match CREATE, GRANT and COMMENT: quoted names
// keep their case, others are folded to lower case as PostgreSQL does.
func normName(n string) string {
	n = strings.TrimSpace(n)
	quoted, last := false, 0
	for i := 0; i < len(n); i++ {
		switch {
		case n[i] == '"':
			quoted = !quoted
		case n[i] == '.' && !quoted:
			last = i + 1
		}
	}
	n = n[last:]
	if len(n) >= 2 && n[0] == '"' && n[len(n)-1] == '"' {
		return n[1 : len(n)-1]
	}
	return strings.ToLower(n)
}
