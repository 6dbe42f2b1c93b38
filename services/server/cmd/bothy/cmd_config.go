package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"bothy/server/internal/platform/config"
	"bothy/server/internal/wire"
)

// configFlag registers --config on fs. Its default is $BOTHY_CONFIG; empty
// means no file: defaults plus BOTHY_ variables. Every command that loads
// the configuration uses it.
func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", os.Getenv(wire.ConfigEnv), "YAML configuration `file` (default $"+wire.ConfigEnv+"; none: defaults and BOTHY_* variables)")
}

// loadConfig loads the configuration at path with the process environment.
func loadConfig(path string) (*wire.Config, error) { return wire.Load(path, os.Environ()) }

// newFlagSet returns a flag set that reports to stderr and returns errors.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("bothy "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args; help is not an error, a bad flag is a usage error.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return false, fmt.Errorf("%w: unexpected argument after the flags", errUsage)
	}
	return false, nil
}

const configUsage = "want one of: check [--config FILE], reference [--write FILE], schema"

// runConfig is `bothy config check|reference|schema`.
func runConfig(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", errUsage, configUsage)
	}
	switch args[0] {
	case "check":
		return runConfigCheck(args[1:], stdout, stderr)
	case "reference":
		return runConfigReference(args[1:], stdout, stderr)
	case "schema":
		return runConfigSchema(args[1:], stdout, stderr)
	}
	return fmt.Errorf("%w: %s", errUsage, configUsage)
}

// runConfigCheck loads the configuration, runs the cross checks and reports
// how many keys came from where. It never prints a value.
func runConfigCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("config check", stderr)
	path := configFlag(fs)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		return err
	}
	reg, err := wire.ConfigRegistry()
	if err != nil {
		return err
	}
	count := map[config.Source]int{}
	keys := reg.Keys()
	for _, k := range keys {
		count[cfg.Values.Source(k.Name)]++
	}
	_, err = fmt.Fprintf(stdout, "configuration is valid: %d keys, %d from the file, %d from the environment, %d defaults; %d cross checks hold\n",
		len(keys), count[config.SourceFile], count[config.SourceEnv], count[config.SourceDefault], len(wire.ConfigChecks()))
	return err
}

// runConfigReference prints the reference tables, or with --write replaces
// the generated part of a document (docs/operations/configuration.md).
func runConfigReference(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("config reference", stderr)
	write := fs.String("write", "", "replace the generated section of this markdown `file` instead of printing")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	md, err := wire.ConfigReference()
	if err != nil {
		return err
	}
	if *write == "" {
		_, err := io.WriteString(stdout, md)
		return err
	}
	doc, err := os.ReadFile(*write)
	if err != nil {
		return err
	}
	out, err := config.ReplaceGenerated(doc, md)
	if err != nil {
		return err
	}
	st, err := os.Stat(*write)
	if err != nil {
		return err
	}
	// gosec's taint analysis (G703) treats everything read by os.ReadFile as
	// a possible path, so the document's own text written back looks like a
	// path traversal. The path is the operator's --write flag, already read
	// above; out is markdown, never used as a path.
	return os.WriteFile(*write, out, st.Mode().Perm()) //nolint:gosec // G703 false positive: out is document text, not a path
}

// runConfigSchema prints the JSON Schema of the configuration file.
func runConfigSchema(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("config schema", stderr)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	schema, err := wire.ConfigSchema()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", schema)
	return err
}
