// Package migrations embeds the goose migrations of the bothy schema so that
// `bothy migrate` needs nothing but the binary.
//
// Numbering rule (docs/adr/0007-migrations-and-database-roles.md): files are
// named NNNNN_<what>.sql with the next free five-digit number; one concern
// per file; a merged file is never edited (migrations.sha256 and
// `make migrations-lock` guard that); every table gets its bothy_app grant in
// the file that creates it.
package migrations

import "embed"

// FS holds every *.sql migration of this directory.
//
//go:embed *.sql
var FS embed.FS
