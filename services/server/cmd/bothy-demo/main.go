// Command bothy-demo shows outgoing webhooks end to end on one machine:
// it runs a bothy process of role all and an HTTPS webhook receiver for
// hooks.example.com in this program, drives the public API as an owner and
// a member, and shows every delivery arriving with both signatures (v1
// HMAC-SHA256, v1a Ed25519) verified by the receiver; then it revokes the
// app's grant and shows the next delivery ending dead with last_error
// not_authorized, without a request. It exits 0 when everything expected
// happened, 1 otherwise and 2 for a wrong invocation.
//
// The database must exist and be migrated (`make demo` does that with a
// throwaway PostgreSQL 18 cluster, tools/demo/demo.sh):
//
//	bothy-demo --config demo.yaml
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"bothy/server/internal/wire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses the flags, runs the demo and returns the exit status.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bothy-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", os.Getenv(wire.ConfigEnv), "configuration `file` (database and secrets; default $"+wire.ConfigEnv+")")
	messages := fs.Int("messages", len(demoMessages)-1,
		fmt.Sprintf("`number` of messages delivered before the grant is revoked (1 to %d)", len(demoMessages)-1))
	timeout := fs.Duration("timeout", 50*time.Second, "upper bound of the whole demo")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "bothy-demo: no arguments expected; see -h")
		return 2
	}
	res, err := runDemo(ctx, demoOptions{
		ConfigFile: *path, Environ: environ, Out: stdout, ServerLog: stderr,
		Messages: *messages, Timeout: *timeout,
	})
	if err != nil {
		fmt.Fprintf(stdout, "FAIL: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "PASS: %d of %d deliveries verified by the receiver (v1 and v1a); after the revocation 1 delivery dead (%s), %d requests in total\n",
		len(res.Verified), *messages, res.Dead.LastError, res.Requests)
	return 0
}
