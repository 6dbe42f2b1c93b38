package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// spec describes one command or subcommand for its help page (ADR 0076):
// the standard flag package parses, spec adds what flag's own usage lacks,
// a purpose line and an example.
type spec struct {
	// name is the command path after "bothy", for example "config check".
	name string
	// summary is the one-line purpose.
	summary string
	// args is the synopsis after the name, for example "[flags]".
	args string
	// example is one typical call, starting with "bothy ".
	example string
}

// usageError is a wrong invocation: main prints it once, with a pointer to
// the command's help, and exits 2. It wraps errUsage.
type usageError struct {
	cmd string
	msg string
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return errUsage }

// usagef returns a usage error of the command named cmd.
func usagef(cmd, format string, a ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, a...)}
}

// flags is a flag set bound to its spec. It prints nothing itself: help goes
// to stdout through printHelp, and a parse error comes back as one
// usageError instead of flag's own report plus the usage dump.
type flags struct {
	*flag.FlagSet
	spec spec
	out  io.Writer
}

// newFlags returns the flag set of s; help pages go to stdout.
func newFlags(s spec, stdout io.Writer) *flags {
	fs := flag.NewFlagSet("bothy "+s.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, spec: s, out: stdout}
}

// parse parses args. help is true when -h or --help was given (the page is
// printed then); any other mistake is a usageError. No argument may follow
// the flags.
func (f *flags) parse(args []string) (help bool, err error) {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, printHelp(f.out, f.spec, f.FlagSet, nil)
		}
		return false, usagef(f.spec.name, "%v", err)
	}
	if f.NArg() > 0 {
		return false, usagef(f.spec.name, "unexpected argument %q after the flags", f.Arg(0))
	}
	return false, nil
}

// printHelp writes the help page of s: the purpose, the usage line, the
// subcommands of a group (subs) or the flags of a leaf (fs) with their
// defaults, and the example.
func printHelp(w io.Writer, s spec, fs *flag.FlagSet, subs []spec) error {
	var b strings.Builder
	fmt.Fprintf(&b, "bothy %s: %s\n\nusage: bothy %s %s\n", s.name, s.summary, s.name, s.args)
	if len(subs) > 0 {
		b.WriteString("\ncommands:\n")
		for _, sub := range subs {
			fmt.Fprintf(&b, "  %-10s %s\n", strings.TrimPrefix(sub.name, s.name+" "), sub.summary)
		}
	}
	if fs != nil {
		var lines []string
		fs.VisitAll(func(fl *flag.Flag) {
			arg, usage := flag.UnquoteUsage(fl)
			head := "--" + fl.Name
			if arg != "" {
				head += " " + arg
			}
			line := fmt.Sprintf("  %s\n        %s", head, usage)
			if fl.DefValue != "" && fl.DefValue != "false" {
				line += fmt.Sprintf(" (default %q)", fl.DefValue)
			}
			lines = append(lines, line)
		})
		if len(lines) > 0 {
			b.WriteString("\nflags:\n" + strings.Join(lines, "\n") + "\n")
		}
	}
	fmt.Fprintf(&b, "\nexample:\n  %s\n", s.example)
	if len(subs) > 0 {
		fmt.Fprintf(&b, "\nrun 'bothy help %s COMMAND' for the flags of a command\n", s.name)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// group is a command with subcommands (config, keys, owner, secrets).
type group struct {
	spec spec
	subs []spec
}

// pick returns the subcommand that args name and the arguments after it.
// With no argument, an unknown one or only -h, --help or help, it prints the
// group's help (done) or returns a usageError.
func (g group) pick(args []string, stdout io.Writer) (sub string, rest []string, done bool, err error) {
	if len(args) == 0 {
		return "", nil, false, usagef(g.spec.name, "a command is required: %s", g.names())
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		return "", nil, true, printHelp(stdout, g.spec, nil, g.subs)
	}
	for _, s := range g.subs {
		if s.name == g.spec.name+" "+args[0] {
			return args[0], args[1:], false, nil
		}
	}
	return "", nil, false, usagef(g.spec.name, "unknown command %q: want %s", args[0], g.names())
}

// names lists the subcommand names for an error message.
func (g group) names() string {
	out := make([]string, len(g.subs))
	for i, s := range g.subs {
		out[i] = strings.TrimPrefix(s.name, g.spec.name+" ")
	}
	return strings.Join(out, ", ")
}
