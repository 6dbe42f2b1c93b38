package secrets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"bothy/server/internal/kernel/clock"
)

// Errors of Resolve, wrapped with the redacted reference.
var (
	// ErrNotFound: the file of a reference does not exist.
	ErrNotFound = errors.New("file not found")
	// ErrUnreadable: the file exists but cannot be read (permissions, a
	// directory, an I/O error).
	ErrUnreadable = errors.New("file not readable")
	// ErrEmpty: the file holds no value (a lone newline counts as empty).
	ErrEmpty = errors.New("file is empty")
)

// Options configure a Provider.
type Options struct {
	// CacheTTL is secrets.cache_ttl: how long a resolved value is served from
	// memory before its file is read again. Zero disables the cache.
	CacheTTL time.Duration
	// Clock tells expiry; nil means clock.Real.
	Clock clock.Clock
}

// Provider resolves secret references. It is safe for concurrent use.
type Provider struct {
	ttl   time.Duration
	clock clock.Clock

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	secret  Secret
	expires time.Time
}

// NewProvider returns a Provider. It fails for a negative CacheTTL.
func NewProvider(o Options) (*Provider, error) {
	if o.CacheTTL < 0 {
		return nil, errors.New("secrets: CacheTTL (secrets.cache_ttl) must not be negative")
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	return &Provider{ttl: o.CacheTTL, clock: o.Clock, cache: map[string]cached{}}, nil
}

// Resolve returns the value a reference points to. For file:<path> it reads
// the file and removes one trailing newline (LF or CRLF), so files written
// by editors and by `bothy secrets init` read the same. A value read within
// the last CacheTTL is served from memory.
//
// Errors wrap ErrInvalidRef, ErrNotFound, ErrUnreadable, ErrEmpty or the
// context's error; they name the reference only by scheme and file name.
func (p *Provider) Resolve(ctx context.Context, ref string) (Secret, error) {
	if err := ctx.Err(); err != nil {
		return Secret{}, err
	}
	r, err := ParseRef(ref)
	if err != nil {
		return Secret{}, err
	}
	key := r.String()
	now := p.clock.Now()
	if p.ttl > 0 {
		p.mu.Lock()
		c, ok := p.cache[key]
		p.mu.Unlock()
		if ok && now.Before(c.expires) {
			return c.secret, nil
		}
	}
	s, err := readFile(r)
	if err != nil {
		return Secret{}, err
	}
	if p.ttl > 0 {
		p.mu.Lock()
		p.cache[key] = cached{secret: s, expires: now.Add(p.ttl)}
		p.mu.Unlock()
	}
	return s, nil
}

// readFile reads the file of r. The errors of package os carry the full path,
// so they are mapped to the sentinels here and never wrapped.
func readFile(r Ref) (Secret, error) {
	b, err := os.ReadFile(r.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Secret{}, fmt.Errorf("secrets: resolving %s: %w", r.Redacted(), ErrNotFound)
	case err != nil:
		return Secret{}, fmt.Errorf("secrets: resolving %s: %w", r.Redacted(), ErrUnreadable)
	}
	v := b
	if t, ok := bytes.CutSuffix(v, []byte("\r\n")); ok {
		v = t
	} else if t, ok := bytes.CutSuffix(v, []byte("\n")); ok {
		v = t
	}
	s := New(v)
	clear(b)
	if s.IsZero() {
		return Secret{}, fmt.Errorf("secrets: resolving %s: %w", r.Redacted(), ErrEmpty)
	}
	return s, nil
}
