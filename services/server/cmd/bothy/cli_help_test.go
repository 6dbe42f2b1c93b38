package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// commandPaths are every command and subcommand of bothy.
var commandPaths = [][]string{
	{"serve"}, {"migrate"}, {"version"},
	{"config"}, {"config", "check"}, {"config", "reference"}, {"config", "schema"},
	{"secrets"}, {"secrets", "init"},
	{"owner"}, {"owner", "create"},
	{"keys"}, {"keys", "rotate"},
}

// TestEveryCommandHasHelp: `bothy CMD --help` and `bothy help CMD` print
// the same page on stdout and exit 0: the one-line purpose, the usage line,
// the flags with their defaults where there are flags, and an example.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	for _, path := range commandPaths {
		name := strings.Join(path, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCLI(t, append(append([]string{}, path...), "--help")...)
			require.Equal(t, 0, code, errOut)
			require.Empty(t, errOut)
			require.Contains(t, out, "usage: bothy "+name)
			require.Contains(t, out, "\nexample:\n  bothy "+name)
			first, _, _ := strings.Cut(out, "\n")
			require.True(t, strings.HasPrefix(first, "bothy "+name+": "), "the first line is the purpose: %q", first)
			code, same, errOut := runCLI(t, append([]string{"help"}, path...)...)
			require.Equal(t, 0, code, errOut)
			require.Equal(t, out, same, "bothy help %s", name)
			code, short, _ := runCLI(t, append(append([]string{}, path...), "-h")...)
			require.Equal(t, 0, code)
			require.Equal(t, out, short)
		})
	}
	_, out, _ := runCLI(t, "serve", "--help")
	require.Contains(t, out, "--role role")
	require.Contains(t, out, `(default "all")`)
	require.Contains(t, out, "--config file")
	_, out, _ = runCLI(t, "config", "--help")
	for _, sub := range []string{"check", "reference", "schema"} {
		require.Contains(t, out, "\n  "+sub+" ", "the group lists its subcommands")
	}
}

// TestUsageErrorsArePrintedOnce: a bad flag, a missing subcommand and an
// unknown one exit 2 with one error line naming the command, and a pointer
// to its help; nothing on stdout.
func TestUsageErrorsArePrintedOnce(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"serve", "--bogus"},
		{"config"},
		{"config", "frobnicate"},
		{"keys", "rotate", "--purpose", "email"},
		{"owner", "create"},
		{"help", "frobnicate"},
	} {
		code, out, errOut := runCLI(t, args...)
		require.Equal(t, 2, code, "%v", args)
		require.Empty(t, out, "%v", args)
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		require.Len(t, lines, 2, "one error line and one hint: %q", errOut)
		require.True(t, strings.HasPrefix(lines[0], "bothy "+args[0]), "%v: %q", args, errOut)
		require.True(t, strings.HasPrefix(lines[1], "run 'bothy help"), "%v: %q", args, errOut)
	}
	_, _, errOut := runCLI(t, "serve", "--bogus")
	require.Equal(t, 1, strings.Count(errOut, "bogus"), errOut)
}

func TestVersionPrintsBuildInfo(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCLI(t, "version")
	require.Equal(t, 0, code, errOut)
	for _, field := range []string{"bothy ", "module:", "revision:", "built:", "go:"} {
		require.Contains(t, out, field)
	}
}
