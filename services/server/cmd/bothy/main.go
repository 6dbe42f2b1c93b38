// Command bothy is the bothy chat server: one binary for every role (api,
// worker, all) and for its operations (migrate, secrets, keys, owner).
//
// Run `bothy help` for the commands.
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

// command is one subcommand of bothy.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists every subcommand; each lives in its own cmd_<name>.go file.
var commands = map[string]command{
	"version": {"print the version", runVersion},
	"serve":   {"run the server in a role: --role api, worker or all", runServe},
	"migrate": {"create roles and database (--bootstrap) and apply migrations", runMigrate},
	"config":  {"check the configuration, print its reference or JSON Schema", runConfig},
	"secrets": {"create the missing generated secrets (secrets init)", runSecrets},
	"owner":   {"create an owner (owner create --email ADDRESS) or count the owners (owner count)", runOwner},
	"keys":    {"rotate the server signing keys of a purpose (keys rotate --purpose P)", runKeys},
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

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "bothy: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := cmd.run(ctx, args[1:], stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "bothy %s: %v\n", args[0], err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: bothy <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
