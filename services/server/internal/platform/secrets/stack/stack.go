// Package stack is the catalogue of the secrets bothy generates for itself
// (docs/operations/configuration.md section 5) and Init, which creates the
// missing ones in secrets.dir for `bothy secrets init`.
//
// Each secret is one file named after its catalogue entry, mode 0600, in a
// directory of mode 0700, holding the value and one newline. The config key
// of each entry (a *_ref key) defaults to file:<secrets.dir>/<name>, so a
// fresh installation needs no configuration for them.
package stack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Generator says how a secret's value is made.
type Generator string

// The generators.
const (
	// GeneratorKey: 32 random bytes, hex-encoded (64 characters). Consumers
	// decode the value with secrets.Secret.HexBytes (M1-09 D5).
	GeneratorKey Generator = "key"
	// GeneratorPassword: 32 random characters of the URL-safe base64
	// alphabet (A-Z, a-z, 0-9, '-', '_'), safe in URLs and SQL literals.
	GeneratorPassword Generator = "password"
)

// Size is the number of random bytes of a key and of characters of a
// password.
const Size = 32

// passwordAlphabet has 64 characters, so the low six bits of a random byte
// pick one without bias.
const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// Generate returns a new value read from random. It fails when random fails
// or for an unknown generator.
func (g Generator) Generate(random io.Reader) ([]byte, error) {
	buf := make([]byte, Size)
	defer clear(buf)
	switch g {
	case GeneratorKey, GeneratorPassword:
	default:
		return nil, errors.New("stack: unknown generator")
	}
	if _, err := io.ReadFull(random, buf); err != nil {
		return nil, errors.New("stack: reading randomness failed")
	}
	if g == GeneratorKey {
		out := make([]byte, hex.EncodedLen(Size))
		hex.Encode(out, buf)
		return out, nil
	}
	out := make([]byte, Size)
	for i, b := range buf {
		out[i] = passwordAlphabet[b&63]
	}
	return out, nil
}

// Service names the component that uses a secret.
type Service string

// The services.
const (
	// ServiceServer: the bothy binary itself.
	ServiceServer Service = "server"
	// ServicePostgres: a PostgreSQL role password (set by `bothy migrate
	// --bootstrap`, used by the server to connect).
	ServicePostgres Service = "postgres"
)

// Entry is one generated secret.
type Entry struct {
	// Name is the file name in secrets.dir.
	Name string
	// Generator makes the value.
	Generator Generator
	// Service uses it.
	Service Service
	// ConfigKey is the *_ref key that references the file.
	ConfigKey string
	// Purpose is one English phrase for the catalogue table.
	Purpose string
}

// Catalogue returns the generated secrets in the order of the table in
// docs/operations/configuration.md section 5.
func Catalogue() []Entry {
	return []Entry{
		{"database_owner_password", GeneratorPassword, ServicePostgres, "database.migration_password_ref", "password of the migration owner role bothy_owner"},
		{"database_app_password", GeneratorPassword, ServicePostgres, "database.password_ref", "password of the runtime role bothy_app"},
		{"signing_keys_master_key", GeneratorKey, ServiceServer, "instance.signing_keys_master_key_ref", "master key that encrypts the private server signing keys at rest"},
		{"webhook_hmac_master_key", GeneratorKey, ServiceServer, "webhook.hmac_master_key_ref", "master key of the derived webhook secrets"},
		{"http_cursor_key", GeneratorKey, ServiceServer, "http.cursor_key_ref", "key that authenticates pagination cursors"},
	}
}

// ErrDirectoryOpen is returned by Init when secrets.dir exists and grants
// any access to group or others.
var ErrDirectoryOpen = errors.New("stack: the secrets directory (secrets.dir) is open to group or others; chmod it to 0700")

// Result tells which secrets Init created and which it found and kept, by
// name, in catalogue order.
type Result struct {
	// Created lists the secrets Init wrote.
	Created []string
	// Kept lists the secrets whose files existed and were left unchanged.
	Kept []string
}

// Init creates dir with mode 0700 when missing, then every catalogue secret
// whose file is missing, with mode 0600. It never overwrites or changes an
// existing file, so running it again is safe and keeps every value. random
// supplies the randomness; nil means crypto/rand.
//
// A file appears complete or not at all: it is written to a temporary file
// and linked into place, and the link fails when another Init was faster.
// On error, Result lists what was done before it.
func Init(dir string, random io.Reader) (Result, error) {
	var res Result
	if random == nil {
		random = rand.Reader
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, fmt.Errorf("stack: creating the secrets directory: %w", pathless(err))
	}
	st, err := os.Stat(dir)
	if err != nil {
		return res, fmt.Errorf("stack: reading the secrets directory: %w", pathless(err))
	}
	if !st.IsDir() {
		return res, errors.New("stack: the secrets directory (secrets.dir) is not a directory")
	}
	if st.Mode().Perm()&0o077 != 0 {
		return res, ErrDirectoryOpen
	}
	for _, e := range Catalogue() {
		created, err := create(dir, e, random)
		if err != nil {
			return res, fmt.Errorf("stack: creating %s: %w", e.Name, err)
		}
		if created {
			res.Created = append(res.Created, e.Name)
		} else {
			res.Kept = append(res.Kept, e.Name)
		}
	}
	return res, syncDir(dir)
}

// create writes the secret of e unless its file exists; it reports whether it
// wrote one.
func create(dir string, e Entry, random io.Reader) (bool, error) {
	final := filepath.Join(dir, e.Name)
	if _, err := os.Lstat(final); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, errors.New("cannot inspect the existing file")
	}
	v, err := e.Generator.Generate(random)
	if err != nil {
		return false, err
	}
	defer clear(v)
	tmp, err := os.CreateTemp(dir, "."+e.Name+".tmp-*") // mode 0600
	if err != nil {
		return false, errors.New("cannot create a temporary file")
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(v)
	if werr == nil {
		_, werr = tmp.Write([]byte{'\n'})
	}
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return false, errors.New("cannot write the temporary file")
	}
	if err := os.Link(tmp.Name(), final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil // another Init created it first: keep theirs
		}
		return false, errors.New("cannot link the file into place")
	}
	return true, nil
}

// syncDir makes the new directory entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("stack: opening the secrets directory: %w", pathless(err))
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("stack: syncing the secrets directory: %w", pathless(err))
	}
	return nil
}

// pathless drops the path from an error of package os: the caller names the
// directory by its config key instead.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
