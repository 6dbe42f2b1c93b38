package main

import (
	"context"
	"fmt"
	"io"

	"bothy/server/internal/platform/secrets/stack"
)

// runSecrets is `bothy secrets init [--dir DIR] [--config FILE]`: it creates
// the missing secrets of the catalogue (docs/operations/configuration.md
// section 5) in DIR, by default secrets.dir of the configuration, and prints
// which it created and which it kept. It never prints a value and never
// overwrites a file, so it is safe to run on every start.
func runSecrets(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "init" {
		return fmt.Errorf("%w: want init [--dir DIR] [--config FILE]", errUsage)
	}
	fs := newFlagSet("secrets init", stderr)
	path := configFlag(fs)
	dir := fs.String("dir", "", "secrets `directory` (default: secrets.dir of the configuration)")
	if help, err := parseFlags(fs, args[1:]); help || err != nil {
		return err
	}
	if *dir == "" {
		cfg, err := loadConfig(*path)
		if err != nil {
			return err
		}
		*dir = cfg.Secrets.Dir
	}
	res, err := stack.Init(*dir, nil)
	for _, name := range res.Created {
		fmt.Fprintf(stdout, "created %s\n", name)
	}
	for _, name := range res.Kept {
		fmt.Fprintf(stdout, "kept %s\n", name)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "secrets in %s: %d created, %d kept\n", *dir, len(res.Created), len(res.Kept))
	return err
}
