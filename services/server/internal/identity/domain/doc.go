// Package domain holds the pure rules of the identity module: email
// addresses (email.go), argon2id password hashes and the password policy
// (password.go), bearer tokens with their kind prefixes and hashes
// (token.go), and names (name.go).
//
// Everything here is a function of its arguments: no I/O, no clock and no
// randomness of its own (callers pass a random source). Limits arrive as
// arguments named after their configuration keys; the bounds of columns
// are constants that name their migration. The use cases in
// internal/identity/app apply these rules.
package domain
