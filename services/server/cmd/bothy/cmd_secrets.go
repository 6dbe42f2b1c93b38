package main

import (
	"context"
	"fmt"
	"io"

	"bothy/server/internal/platform/secrets/stack"
)

// The specs of `bothy secrets` and `bothy secrets init`.
var (
	secretsInitSpec = spec{name: "secrets init", args: "[flags]",
		summary: "create the missing generated secrets; never prints a value, never overwrites a file",
		example: "bothy secrets init --config /etc/bothy/config.yaml"}
	secretsGroup = group{
		spec: spec{name: "secrets", args: "COMMAND [flags]",
			summary: "create the generated secrets of the instance",
			example: "bothy secrets init --dir /etc/bothy/secrets"},
		subs: []spec{secretsInitSpec},
	}
)

// runSecrets is `bothy secrets init [--dir DIR] [--config FILE]`: it creates
// the missing secrets of the catalogue (docs/operations/configuration.md
// section 5) in DIR, by default secrets.dir of the configuration, and prints
// which it created and which it kept. It never prints a value and never
// overwrites a file, so it is safe to run on every start.
func runSecrets(_ context.Context, args []string, stdout, _ io.Writer) error {
	_, rest, done, err := secretsGroup.pick(args, stdout)
	if done || err != nil {
		return err
	}
	fs := newFlags(secretsInitSpec, stdout)
	path := configFlag(fs)
	dir := fs.String("dir", "", "secrets `directory` (default: secrets.dir of the configuration)")
	if help, err := fs.parse(rest); help || err != nil {
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
