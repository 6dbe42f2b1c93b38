// Command bothy is the bothy chat server: one binary for every role (api,
// worker, all) and for its operations (migrate, secrets, keys, owner).
//
// Run `bothy help` for the commands and `bothy help COMMAND` for one.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one top-level command of bothy; each lives in its own
// cmd_<name>.go file with its spec.
type command struct {
	spec spec
	run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists every command.
var commands = map[string]command{
	"version": {versionSpec, runVersion},
	"serve":   {serveSpec, runServe},
	"migrate": {migrateSpec, runMigrate},
	"config":  {configGroup.spec, runConfig},
	"secrets": {secretsGroup.spec, runSecrets},
	"owner":   {ownerGroup.spec, runOwner},
	"keys":    {keysGroup.spec, runKeys},
}

// errUsage marks a wrong invocation; main exits with status 2 for it.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext returns a context that ends on SIGINT (Ctrl-C) or SIGTERM,
// the signals that stop `bothy serve` gracefully, and the function that
// stops listening for them.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// run runs the command of args and returns the exit status: 0, 1 for a
// failure, 2 for a wrong invocation. Every error is printed exactly once, on
// stderr, prefixed with the command; a wrong invocation adds one line that
// points to the command's help.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	name, rest := args[0], args[1:]
	if name == "help" {
		if len(rest) == 0 {
			usage(stdout)
			return 0
		}
		// bothy help CMD [SUB]: the page that CMD [SUB] --help prints.
		name, rest = rest[0], append(append([]string{}, rest[1:]...), "--help")
		if _, ok := commands[name]; !ok {
			return fail(stderr, "help", usagef("", "unknown command %q", name))
		}
	}
	cmd, ok := commands[name]
	if !ok {
		return fail(stderr, name, usagef("", "unknown command %q", name))
	}
	if err := cmd.run(ctx, rest, stdout, stderr); err != nil {
		return fail(stderr, name, err)
	}
	return 0
}

// fail prints err once and returns its exit status. A usageError names
// its command (or none for an unknown command) and gets one more line that
// points to the help.
func fail(stderr io.Writer, name string, err error) int {
	var ue *usageError
	if !errors.As(err, &ue) {
		fmt.Fprintf(stderr, "bothy %s: %v\n", name, err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	if ue.cmd == "" {
		fmt.Fprintf(stderr, "bothy %s: %s\nrun 'bothy help' for the commands\n", name, ue.msg)
		return 2
	}
	fmt.Fprintf(stderr, "bothy %s: %s\nrun 'bothy help %s' for its usage\n", ue.cmd, ue.msg, ue.cmd)
	return 2
}

// usage prints the top-level help: every command with its purpose.
func usage(w io.Writer) {
	fmt.Fprintln(w, "bothy: the bothy chat server and its operations commands")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: bothy COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].spec.summary)
	}
	fmt.Fprintln(w, "  help       print the help of a command: bothy help COMMAND [SUBCOMMAND]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "example:")
	fmt.Fprintln(w, "  bothy serve --role worker --config /etc/bothy/config.yaml")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "run 'bothy help COMMAND' for its flags and an example")
}
