package receiverlibs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// guidePath is docs/api/webhooks.md, whose section 3.1 shows the receiver
// libraries first.
const guidePath = "../../../../docs/api/webhooks.md"

// goLibrary is the Go library's module folder, from this package.
const goLibrary = "../../../../libraries/go/webhookverify"

// libraryBlock returns the one fenced block of docs/api/webhooks.md opened
// with exactly info (the library examples use info strings of their own,
// so the hand-written reference blocks of section 3.2, "go" and "js",
// stay the only ones of their language that internal/apps/domain tests).
func libraryBlock(t *testing.T, info string) string {
	t.Helper()
	raw, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	parts := strings.Split(string(raw), "\n```"+info+"\n")
	require.Len(t, parts, 2, "docs/api/webhooks.md has exactly one block opened with ```%s", info)
	block, _, ok := strings.Cut(parts[1], "\n```\n")
	require.True(t, ok, "the ```%s block is closed", info)
	return block + "\n"
}

// TestReceiverGuideShowsLibraryCode keeps the library examples of
// docs/api/webhooks.md section 3.1 working: the Go program is built in a
// module of its own that requires the library through a replace directive,
// as a receiver does (offline, the library has no dependency); the
// JavaScript block is checked by Node and imports only names the library
// exports.
func TestReceiverGuideShowsLibraryCode(t *testing.T) {
	t.Parallel()
	t.Run("Go", func(t *testing.T) {
		t.Parallel()
		goBin, err := exec.LookPath("go")
		require.NoError(t, err)
		lib, err := filepath.Abs(goLibrary)
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "receiver.go"), []byte(libraryBlock(t, "go [receiver.go]")), 0o600))
		gomod := "module example.com/receiver\n\ngo 1.24.0\n\nrequire bothy/libraries/go/webhookverify v0.1.0\n\n" +
			"replace bothy/libraries/go/webhookverify => " + lib + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o600))
		cmd := exec.CommandContext(t.Context(), goBin, "vet", ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "the Go example of docs/api/webhooks.md 3.1 does not build against the library: %s", out)
	})
	t.Run("JavaScript", func(t *testing.T) {
		t.Parallel()
		node, err := exec.LookPath("node")
		require.NoError(t, err, "the JavaScript library runs with Node: install nodejs")
		block := libraryBlock(t, "javascript")
		dir := t.TempDir()
		file := filepath.Join(dir, "receiver.mjs")
		require.NoError(t, os.WriteFile(file, []byte(block), 0o600))
		out, err := exec.CommandContext(t.Context(), node, "--check", file).CombinedOutput()
		require.NoError(t, err, "node --check: %s", out)

		imports := regexp.MustCompile(`(?m)^import \{([^}]*)\} from '@bothy/webhookverify'$`).FindStringSubmatch(block)
		require.NotNil(t, imports, "the block imports the library as @bothy/webhookverify")
		lib, err := filepath.Abs(jsLibrary)
		require.NoError(t, err)
		script := `const m = await import(process.argv[1]); const missing = process.argv.slice(2).filter((n) => !(n in m)); ` +
			`if (missing.length) { console.error('not exported: ' + missing.join(' ')); process.exit(1) }`
		args := []string{"--input-type=module", "-e", script, "file://" + lib}
		for _, name := range strings.Split(imports[1], ",") {
			args = append(args, strings.TrimSpace(name))
		}
		out, err = exec.CommandContext(t.Context(), node, args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	})
}
