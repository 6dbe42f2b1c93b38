// Package domain holds the pure rules of the instance module: the kid of a
// signing key (kid.go), the encryption of private keys at rest (seal.go),
// the life cycle of signing keys with the rotation plan (rotation.go), and
// which keys sign and which are published, in which order (selection.go).
//
// Everything here is a function of its arguments: no I/O, no clock and no
// randomness of its own (callers pass now and a random source). Windows
// arrive as arguments named after their configuration keys. The use cases in
// internal/instance/app apply these rules inside their units of work.
package domain
