package domain

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"strings"
)

// TokenKind says what a bearer token authenticates as. Its value is the
// token's prefix without the underscore.
type TokenKind string

// The token kinds. The prefix tells at a glance (and to secret scanners)
// what a leaked token is, and lets the authenticator look in one table.
const (
	// TokenSession is a session token from sign-in: "bts_".
	TokenSession TokenKind = "bts"
	// TokenPersonal is a personal token: "btp_".
	TokenPersonal TokenKind = "btp"
	// TokenApp is an app token from installation: "bta_".
	TokenApp TokenKind = "bta"
)

// TokenBytes is the number of random bytes of a token (256 bits).
const TokenBytes = 32

// tokenTextLength is the length of the base64url (no padding) of TokenBytes.
var tokenTextLength = base64.RawURLEncoding.EncodedLen(TokenBytes)

// TokenHash is the SHA-256 of a whole token, prefix included: the only form
// of a token that is stored, and the key of every lookup.
type TokenHash [sha256.Size]byte

// HashToken returns the TokenHash of token. A fast hash is right here (unlike
// for passwords): a token holds 256 random bits, so the hash cannot be
// reversed by guessing.
func HashToken(token string) TokenHash { return sha256.Sum256([]byte(token)) }

// NewToken returns a new token of kind k: "<kind>_" followed by the
// base64url (no padding) of TokenBytes bytes from random, and its hash. The
// token is shown once; only the hash is stored. Errors: ErrRandom.
func NewToken(k TokenKind, random io.Reader) (string, TokenHash, error) {
	buf := make([]byte, TokenBytes)
	defer clear(buf)
	if _, err := io.ReadFull(random, buf); err != nil {
		return "", TokenHash{}, ErrRandom
	}
	token := string(k) + "_" + base64.RawURLEncoding.EncodeToString(buf)
	return token, HashToken(token), nil
}

// ParseToken returns the kind of token and its hash when token has the form
// NewToken makes: a known prefix and exactly the base64url of TokenBytes
// bytes in canonical encoding. Anything else reports false, so malformed
// input never reaches the database.
func ParseToken(token string) (TokenKind, TokenHash, bool) {
	prefix, body, ok := strings.Cut(token, "_")
	if !ok {
		return "", TokenHash{}, false
	}
	k := TokenKind(prefix)
	switch k {
	case TokenSession, TokenPersonal, TokenApp:
	default:
		return "", TokenHash{}, false
	}
	if len(body) != tokenTextLength {
		return "", TokenHash{}, false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil || len(raw) != TokenBytes {
		return "", TokenHash{}, false
	}
	clear(raw)
	return k, HashToken(token), true
}
