package secrets

import (
	"errors"
	"path/filepath"
	"strings"
)

// SchemeFile is the scheme of a reference to a file holding the value.
const SchemeFile = "file"

// ErrInvalidRef is returned for a reference that does not have the form
// file:<path>. The error never repeats the text, which may be a value pasted
// in the wrong place.
var ErrInvalidRef = errors.New("secrets: reference must have the form file:<path>")

// Ref is a parsed secret reference.
type Ref struct {
	// Scheme is the kind of store; only SchemeFile exists today.
	Scheme string
	// Path is the cleaned path of the file (relative paths are taken from the
	// working directory).
	Path string
}

// ParseRef parses a reference of the form file:<path>. It rejects an empty or
// unknown scheme, an empty path, a path ending in a slash (a directory) and a
// NUL byte. The path is cleaned, so equal files give equal references.
func ParseRef(s string) (Ref, error) {
	path, ok := strings.CutPrefix(s, SchemeFile+":")
	if !ok || path == "" || strings.HasSuffix(path, "/") || strings.ContainsRune(path, 0) {
		return Ref{}, ErrInvalidRef
	}
	path = filepath.Clean(path)
	if path == "." || path == "/" {
		return Ref{}, ErrInvalidRef
	}
	return Ref{Scheme: SchemeFile, Path: path}, nil
}

// String renders the reference in configuration form.
func (r Ref) String() string { return r.Scheme + ":" + r.Path }

// Redacted renders the reference as it may appear in errors and logs: the
// scheme and the file name, without the folders.
func (r Ref) Redacted() string { return r.Scheme + ":" + filepath.Base(r.Path) }
