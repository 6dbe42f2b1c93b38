package domain

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"bothy/server/internal/kernel/errs"
)

// Params are the argon2id cost parameters (RFC 9106). Each hash stores the
// parameters it was made with, so changed parameters apply to new hashes
// and, through NeedsRehash, to the next sign-in of each person.
type Params struct {
	// MemoryKiB is identity.password_hash_memory in KiB (m).
	MemoryKiB uint32
	// Iterations is identity.password_hash_iterations (t).
	Iterations uint32
	// Parallelism is identity.password_hash_parallelism (p).
	Parallelism uint8
}

// The bounds of Params: the bounds of the configuration keys, which also
// bound what ParseHash accepts, so a stored hash can never make a sign-in
// allocate more than an operator could configure.
const (
	// MinMemoryKiB is the lower bound of identity.password_hash_memory
	// accepted in code (argon2 needs 8 KiB per lane); the key itself
	// starts higher.
	MinMemoryKiB = 8
	// MaxMemoryKiB is the upper bound of identity.password_hash_memory (1 GiB).
	MaxMemoryKiB = 1 << 20
	// MaxIterations is the upper bound of identity.password_hash_iterations.
	MaxIterations = 16
	// MaxParallelism is the upper bound of identity.password_hash_parallelism.
	MaxParallelism = 16
)

// The lengths of salt and derived key in bytes (RFC 9106 section 3.1
// recommends 16 bytes of salt; 32 bytes of tag).
const (
	SaltLength = 16
	KeyLength  = 32
)

// ErrParams is returned for parameters outside their bounds.
var ErrParams = errors.New("identity: argon2id parameters out of bounds")

// ErrHash is returned by ParseHash and VerifyPassword for a stored hash that
// is not an argon2id hash of this format; it never carries the hash.
var ErrHash = errors.New("identity: malformed password hash")

// ErrRandom is returned when the random source fails.
var ErrRandom = errors.New("identity: reading randomness failed")

// NewParams checks and converts the configuration values: memoryBytes of
// identity.password_hash_memory (a whole number of KiB), iterations and
// parallelism. Errors: ErrParams.
func NewParams(memoryBytes int64, iterations, parallelism int) (Params, error) {
	p := Params{MemoryKiB: uint32(memoryBytes / 1024), Iterations: uint32(iterations), Parallelism: uint8(parallelism)}
	if memoryBytes%1024 != 0 || memoryBytes/1024 > MaxMemoryKiB || iterations < 1 || iterations > MaxIterations ||
		parallelism < 1 || parallelism > MaxParallelism || p.Validate() != nil {
		return Params{}, ErrParams
	}
	return p, nil
}

// Validate reports ErrParams for parameters argon2id cannot use or that
// exceed the bounds.
func (p Params) Validate() error {
	if p.Iterations < 1 || p.Iterations > MaxIterations || p.Parallelism < 1 || p.Parallelism > MaxParallelism ||
		p.MemoryKiB < MinMemoryKiB*uint32(p.Parallelism) || p.MemoryKiB > MaxMemoryKiB {
		return ErrParams
	}
	return nil
}

// Hash is a parsed password hash.
type Hash struct {
	// Params are the parameters it was made with.
	Params Params
	// Salt and Key are the random salt and the derived key.
	Salt, Key []byte
}

// hashPrefix is the PHC string format identifier of argon2id version 0x13.
const hashPrefix = "$argon2id$v=19$"

// String encodes h in the PHC string format the reference implementation
// uses: $argon2id$v=19$m=<KiB>,t=<t>,p=<p>$<salt>$<key>, salt and key in
// standard base64 without padding.
func (h Hash) String() string {
	return fmt.Sprintf("%sm=%d,t=%d,p=%d$%s$%s", hashPrefix, h.Params.MemoryKiB, h.Params.Iterations, h.Params.Parallelism,
		base64.RawStdEncoding.EncodeToString(h.Salt), base64.RawStdEncoding.EncodeToString(h.Key))
}

// HashPassword derives an argon2id hash of password with p and a fresh salt
// from random, and returns it in the PHC string format (Hash.String).
// Errors: ErrParams, ErrRandom.
func HashPassword(password string, p Params, random io.Reader) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	salt := make([]byte, SaltLength)
	if _, err := io.ReadFull(random, salt); err != nil {
		return "", ErrRandom
	}
	key := argon2.IDKey([]byte(password), salt, p.Iterations, p.MemoryKiB, p.Parallelism, KeyLength)
	return Hash{Params: p, Salt: salt, Key: key}.String(), nil
}

// VerifyPassword reports whether password matches the stored hash encoded,
// comparing the derived keys in constant time. It costs one full hash with
// the stored parameters whatever the outcome. Errors: ErrHash for a hash
// that does not parse (then the password is not checked).
func VerifyPassword(encoded, password string) (bool, error) {
	h, err := ParseHash(encoded)
	if err != nil {
		return false, err
	}
	key := argon2.IDKey([]byte(password), h.Salt, h.Params.Iterations, h.Params.MemoryKiB, h.Params.Parallelism, uint32(len(h.Key)))
	return subtle.ConstantTimeCompare(key, h.Key) == 1, nil
}

// NeedsRehash reports whether encoded was made with parameters other than
// p (or does not parse), so a sign-in that verified the password should
// store a new hash.
func NeedsRehash(encoded string, p Params) bool {
	h, err := ParseHash(encoded)
	return err != nil || h.Params != p
}

// ParseHash parses a hash in the format of Hash.String. It accepts only
// argon2id version 19, parameters within the bounds of Params, a salt of
// at least 8 bytes and a key of KeyLength bytes, in canonical encoding
// (ParseHash(h).String() == h). Errors: ErrHash.
func ParseHash(encoded string) (Hash, error) {
	rest, ok := strings.CutPrefix(encoded, hashPrefix)
	if !ok {
		return Hash{}, ErrHash
	}
	parts := strings.Split(rest, "$")
	if len(parts) != 3 {
		return Hash{}, ErrHash
	}
	var h Hash
	var err error
	if h.Params, err = parseParams(parts[0]); err != nil {
		return Hash{}, err
	}
	if h.Salt, err = base64.RawStdEncoding.Strict().DecodeString(parts[1]); err != nil || len(h.Salt) < 8 {
		return Hash{}, ErrHash
	}
	if h.Key, err = base64.RawStdEncoding.Strict().DecodeString(parts[2]); err != nil || len(h.Key) != KeyLength {
		return Hash{}, ErrHash
	}
	if h.String() != encoded {
		return Hash{}, ErrHash
	}
	return h, nil
}

func parseParams(s string) (Params, error) {
	fields := strings.Split(s, ",")
	if len(fields) != 3 {
		return Params{}, ErrHash
	}
	var vals [3]uint64
	for i, name := range []string{"m=", "t=", "p="} {
		v, ok := strings.CutPrefix(fields[i], name)
		if !ok {
			return Params{}, ErrHash
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return Params{}, ErrHash
		}
		vals[i] = n
	}
	if vals[2] > MaxParallelism {
		return Params{}, ErrHash
	}
	p := Params{MemoryKiB: uint32(vals[0]), Iterations: uint32(vals[1]), Parallelism: uint8(vals[2])}
	if p.Validate() != nil {
		return Params{}, ErrHash
	}
	return p, nil
}

// CodeTooShort is the field error code of a password shorter than
// identity.password_min_length.
const CodeTooShort = "too_short"

// CheckPassword applies the password policy: at least minLength characters
// (identity.password_min_length) of valid UTF-8. Length is the only rule:
// composition rules make passwords weaker in practice (NIST SP 800-63B
// section 5.1.1.2). Errors: a validation_failed *errs.Error with pointer
// pointer and code too_short or invalid_characters; it never contains the
// password.
func CheckPassword(pointer, password string, minLength int) error {
	if !utf8.ValidString(password) {
		return errs.Validation(errs.Field(pointer, CodeInvalidCharacters))
	}
	if utf8.RuneCountInString(password) < minLength {
		return errs.Validation(errs.Field(pointer, CodeTooShort))
	}
	return nil
}
