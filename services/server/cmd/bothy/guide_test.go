package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/config"
	"bothy/server/internal/platform/httpserver/httpservertest"
	"bothy/server/internal/platform/pg/pgtest"
	"bothy/server/internal/platform/secrets/stack"
)

// asBothyEnv, when set to 1 in the environment of this test binary, makes
// the binary act as the bothy command (TestMain): the guide test puts a
// bin/bothy next to the guide's commands that runs this binary so, and the
// guide then calls the real CLI without a separate build.
const asBothyEnv = "GUIDE_TEST_AS_BOTHY"

// The guide's addresses, which the test replaces by free loopback ports so
// that it never collides with `make run` or another test.
const (
	guideAPIAddress      = "127.0.0.1:8080"
	guideReceiverAddress = "127.0.0.1:8443"
)

// guideBlockTimeout bounds one block of the guide; the whole guide takes a
// few seconds.
const guideBlockTimeout = time.Minute

// fence is the first line of a fenced code block of the guide and its
// language.
var fence = regexp.MustCompile("^```([a-z]*)$")

// guideBlock is one fenced code block of a Markdown page.
type guideBlock struct {
	lang string
	text string
	line int // of the opening fence, 1-based
}

// guideBlocks returns the fenced code blocks of md in page order. Fences
// are exactly three backticks at the start of a line, as the guide writes
// them.
func guideBlocks(md string) []guideBlock {
	var blocks []guideBlock
	var cur *guideBlock
	for i, line := range strings.Split(md, "\n") {
		switch {
		case cur == nil:
			if m := fence.FindStringSubmatch(line); m != nil {
				cur = &guideBlock{lang: m[1], line: i + 1}
			}
		case line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		default:
			cur.text += line + "\n"
		}
	}
	return blocks
}

func TestGuideBlocksAreTheFencedBlocksInOrder(t *testing.T) {
	t.Parallel()
	md := "intro\n```console\nmake run\n```\ntext\n```sh\necho one\necho two\n```\n\n```\nplain\n```\n"
	require.Equal(t, []guideBlock{
		{lang: "console", text: "make run\n", line: 2},
		{lang: "sh", text: "echo one\necho two\n", line: 6},
		{lang: "", text: "plain\n", line: 11},
	}, guideBlocks(md))
}

// TestFirstWebhookGuide runs docs/guides/first-webhook.md as a newcomer
// would: every `sh` block in order in one bash, in a folder laid out like
// a clone after `make run` (bin/bothy, .local/config.yaml, .local/secrets,
// docs/api/webhooks.md), against a real server of role all over a pgtest
// database. A `console` block `make run` (re)starts the server with the
// configuration file as the guide left it, the way make run does after
// Ctrl-C. The receiver is the guide's own (Node.js). The guide's last
// check fails the shell unless the delivery succeeded; the test also wants
// the receiver's line with both signatures verified.
func TestFirstWebhookGuide(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../../../..")
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "docs/guides/first-webhook.md"))
	require.NoError(t, err)
	for _, tool := range []string{"bash", "curl", "jq", "openssl", "node", "awk"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the guide needs %s on PATH", tool)
	}

	addrs := freeAddresses(t, 3)
	md := strings.ReplaceAll(string(raw), guideAPIAddress, addrs[0])
	md = strings.ReplaceAll(md, guideReceiverAddress, addrs[2])
	work := guideClone(t, root, addrs[0], addrs[1])
	environ := guideEnviron(t)

	sh := startGuideShell(t, work, environ)
	srv := &guideServer{t: t, work: work, environ: environ, api: addrs[0]}
	t.Cleanup(srv.stop)

	blocks := guideBlocks(md)
	ran, starts := 0, 0
	for _, b := range blocks {
		switch {
		case b.lang == "sh":
			sh.run(b)
			ran++
		case b.lang == "console" && strings.TrimSpace(b.text) == "make run":
			srv.restart()
			starts++
		}
	}
	require.GreaterOrEqual(t, ran, 10, "the guide's sh blocks")
	require.Equal(t, 2, starts, "the guide starts make run, changes the configuration and starts it again")
	out := sh.output()
	require.Regexp(t, `receiver: webhook-id [0-9a-f-]{36}: v1a ok, v1 ok`, out)
	require.NotContains(t, out, "FAILED")
	require.NotContains(t, out+srv.log.String(), "whsec_", "the secret is kept in a file, never printed")
	for _, f := range []string{"subscription.json", "hmac-secret"} {
		st, err := os.Stat(filepath.Join(work, ".local/receiver", f))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s holds the secret: readable by its owner only", f)
	}
}

// freeAddresses returns n distinct free loopback addresses.
func freeAddresses(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer func() { _ = l.Close() }()
		out = append(out, l.Addr().String())
	}
	return out
}

// guideClone lays out a folder as a clone after `make run` set it up:
// bin/bothy (this test binary acting as the CLI), the secrets of `bothy
// secrets init`, the configuration file tools/dev/run.sh writes (here for a
// pgtest database, already migrated, and the test's listen addresses) and
// the receiver's guide the guide copies its code from.
func guideClone(t *testing.T, root, api, operator string) string {
	t.Helper()
	work := t.TempDir()
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(work, "bin"), 0o755))
	shim := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", asBothyEnv, self)
	require.NoError(t, os.WriteFile(filepath.Join(work, "bin/bothy"), []byte(shim), 0o755))

	webhooks, err := os.ReadFile(filepath.Join(root, "docs/api/webhooks.md"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(work, "docs/api"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "docs/api/webhooks.md"), webhooks, 0o644))

	local := filepath.Join(work, ".local")
	_, err = stack.Init(filepath.Join(local, "secrets"), nil)
	require.NoError(t, err)
	db := pgtest.New(t)
	cfg := fmt.Sprintf(`# Configuration of the local bothy of the guide test (as tools/dev/run.sh writes it).
database:
  url: %s
secrets:
  dir: %s
http:
  listen_address: %s
  operator_listen_address: %s
  shutdown_timeout: 5s
jobs:
  shutdown_timeout: 5s
log:
  level: warn
`, db.AppURL, filepath.Join(local, "secrets"), api, operator)
	require.NoError(t, os.WriteFile(filepath.Join(local, "config.yaml"), []byte(cfg), 0o600))
	return work
}

// guideEnviron is the environment of the guide's shell and of the server:
// this process's without BOTHY_ variables (unknown ones are configuration
// errors), the pgtest role without a password file, and the cheapest
// argon2id parameters (the race detector makes hashing slow).
func guideEnviron(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BOTHY_") && !strings.HasPrefix(kv, asBothyEnv+"=") {
			env = append(env, kv)
		}
	}
	set := func(key, value string) string { return config.EnvName(key) + "=" + value }
	return append(env,
		set("database.password_ref", ""),
		set("identity.password_hash_memory", "8MiB"),
		set("identity.password_hash_iterations", "1"),
	)
}

// guideShell is one bash that runs the guide's blocks in order, so shell
// variables carry from one block to the next like in a terminal.
type guideShell struct {
	t     *testing.T
	dir   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	ended chan struct{}
	mu    sync.Mutex
	out   strings.Builder
	n     int
}

const guideDone = "@@guide-block-done"

func startGuideShell(t *testing.T, work string, environ []string) *guideShell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-euo", "pipefail", "-s")
	cmd.Dir = work
	cmd.Env = environ
	// Its own process group, so the cleanup also ends what the guide
	// started in the background (the receiver).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	// An *os.File, so Wait returns when bash ends even while the receiver
	// in the background still holds the pipe.
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = pw, pw
	require.NoError(t, cmd.Start())
	_ = pw.Close()
	s := &guideShell{t: t, dir: t.TempDir(), cmd: cmd, stdin: stdin, lines: make(chan string, 1024), ended: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.ended)
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if sc.Text() == guideDone {
				s.lines <- sc.Text()
			}
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = pr.Close()
	})
	return s
}

// run sources block b in the shell with standard input from /dev/null and
// waits until it finished; a failing command ends the shell (set -e) and
// fails the test with the shell's output.
func (s *guideShell) run(b guideBlock) {
	s.t.Helper()
	s.n++
	file := filepath.Join(s.dir, fmt.Sprintf("block-%02d.sh", s.n))
	require.NoError(s.t, os.WriteFile(file, []byte(b.text), 0o600))
	_, err := fmt.Fprintf(s.stdin, "source %q </dev/null\necho %s\n", file, guideDone)
	require.NoError(s.t, err, "the shell ended before the block of line %d:\n%s", b.line, s.output())
	deadline := time.After(guideBlockTimeout)
	for {
		select {
		case line := <-s.lines:
			if line == guideDone {
				return
			}
		case <-s.ended:
			// The shell ended (set -e); what it printed last may still be
			// in the pipe, which the receiver in the background keeps open.
			time.Sleep(100 * time.Millisecond)
			s.t.Fatalf("the guide's block at line %d failed:\n%s\nshell output:\n%s", b.line, b.text, s.output())
		case <-deadline:
			s.t.Fatalf("the guide's block at line %d did not finish in %s:\n%s\nshell output:\n%s", b.line, guideBlockTimeout, b.text, s.output())
		}
	}
}

func (s *guideShell) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// guideServer is the `make run` of the guide: `bin/bothy serve --role all`
// with the clone's configuration file.
type guideServer struct {
	t       *testing.T
	work    string
	environ []string
	api     string
	cmd     *exec.Cmd
	exited  chan struct{}
	log     httpservertest.LogBuffer
}

// restart stops a running server and starts a new one, then waits for
// /readyz.
func (s *guideServer) restart() {
	s.t.Helper()
	s.stop()
	cmd := exec.Command(filepath.Join(s.work, "bin/bothy"), "serve", "--role", "all", "--config", ".local/config.yaml")
	cmd.Dir = s.work
	cmd.Env = s.environ
	cmd.Stdout, cmd.Stderr = &s.log, &s.log
	require.NoError(s.t, cmd.Start())
	exited := make(chan struct{})
	s.cmd, s.exited = cmd, exited
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			s.t.Fatalf("the server ended at start:\n%s", s.log.String())
		default:
		}
		if resp, err := client.Get("http://" + s.api + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("the server was not ready within 30 s:\n%s", s.log.String())
}

// stop ends the running server as Ctrl-C does and waits for it.
func (s *guideServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// asBothy runs the bothy command instead of the tests when the guide's
// bin/bothy started this binary (asBothyEnv). It reports whether it did.
func asBothy() (int, bool) {
	if os.Getenv(asBothyEnv) != "1" {
		return 0, false
	}
	ctx, stop := signalContext()
	defer stop()
	return run(ctx, os.Args[1:], os.Stdout, os.Stderr), true
}
