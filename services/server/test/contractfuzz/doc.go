// Package contractfuzz holds the contract-driven fuzz suite of issue 12:
// tests only. For every enabled operation of api/openapi.yaml they send
// malformed variants of each parameter, header and body member through the
// real chain of a process of role api on PostgreSQL, as an owner, a member
// and anonymous, and require that the edge never answers 5xx to a client's
// mistake, answers every 4xx with a problem document, and changes no row.
// See README.md.
package contractfuzz
