package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy/server/internal/identity/adapters/postgres"
	"bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/kernel/errs"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/secrets"
	"bothy/server/internal/platform/secrets/stack"
	"bothy/server/internal/wire"
)

// The specs of `bothy owner`, `bothy owner create` and `bothy owner count`.
var (
	ownerCreateSpec = spec{name: "owner create", args: "--email ADDRESS [flags]",
		summary: "create a person with the role owner; the password comes from stdin, or is generated on a terminal",
		example: "bothy owner create --email robin@example.com --config /etc/bothy/config.yaml"}
	ownerCountSpec = spec{name: "owner count", args: "[flags]",
		summary: "print the number of owners (make run shows its owner hint only while it is 0)",
		example: "bothy owner count --config /etc/bothy/config.yaml"}
	ownerGroup = group{
		spec: spec{name: "owner", args: "COMMAND [flags]",
			summary: "create an owner of the instance, or count the owners",
			example: "bothy owner create --email robin@example.com"},
		subs: []spec{ownerCreateSpec, ownerCountSpec},
	}
)

// runOwner is `bothy owner create --email robin@example.com`: it creates a
// person with the role owner, the way the first owner of an installation
// comes into being. The password comes from standard input when that is a
// pipe or a file (first line); on a terminal, a password is generated and
// printed once. `bothy owner count` prints how many owners exist (`make
// run` shows its owner hint only while that is 0).
func runOwner(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return ownerCommand(ctx, args, os.Environ(), os.Stdin, stdinIsTerminal(), stdout, stderr)
}

// stdinIsTerminal reports whether standard input is a character device (a
// terminal) rather than a pipe or a file.
func stdinIsTerminal() bool {
	st, err := os.Stdin.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ownerCommand is runOwner with its inputs passed in, for tests.
func ownerCommand(ctx context.Context, args, environ []string, stdin io.Reader, terminal bool, stdout, stderr io.Writer) error {
	sub, rest, done, err := ownerGroup.pick(args, stdout)
	if done || err != nil {
		return err
	}
	if sub == "count" {
		return ownerCount(ctx, rest, environ, stdout)
	}
	fs := newFlags(ownerCreateSpec, stdout)
	path := configFlag(fs)
	email := fs.String("email", "", "email `address` of the new owner (required)")
	name := fs.String("name", "", "display `name` (default: the part of the address before @)")
	if help, err := fs.parse(rest); help || err != nil {
		return err
	}
	if *email == "" {
		return usagef(ownerCreateSpec.name, "--email is required")
	}
	if *name == "" {
		*name, _, _ = strings.Cut(strings.TrimSpace(*email), "@")
	}
	password, generated, err := ownerPassword(stdin, terminal)
	if err != nil {
		return err
	}
	boot, cfg, closeDB, err := openBootstrap(ctx, *path, environ)
	if err != nil {
		return err
	}
	defer closeDB()
	owner, err := boot.CreateOwner(ctx, app.CreatePerson{Email: *email, DisplayName: *name, Password: password})
	if err != nil {
		return describe(err)
	}
	fmt.Fprintf(stdout, "created owner %s <%s> with id %s\n", owner.DisplayName, owner.Email, owner.ID)
	if generated {
		fmt.Fprintf(stdout, "password (shown once, keep it now): %s\n", password)
	}
	fmt.Fprintf(stdout, "sign in (type the password into the JSON body):\n%s", signInExample(cfg.HTTP.ListenAddress, owner.Email))
	return nil
}

// ownerCount is `bothy owner count [--config FILE]`: it prints the number of
// people with the role owner, one line.
func ownerCount(ctx context.Context, args, environ []string, stdout io.Writer) error {
	fs := newFlags(ownerCountSpec, stdout)
	path := configFlag(fs)
	if help, err := fs.parse(args); help || err != nil {
		return err
	}
	boot, _, closeDB, err := openBootstrap(ctx, *path, environ)
	if err != nil {
		return err
	}
	defer closeDB()
	n, err := boot.CountOwners(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, n)
	return err
}

// openBootstrap loads the configuration of path and environ, connects as
// bothy_app (openRuntime) and returns the identity bootstrap with the
// configured options, the configuration and the function that closes the
// connection. It fails on a configuration error or an unreachable database.
func openBootstrap(ctx context.Context, path string, environ []string) (*app.Bootstrap, *wire.Config, func(), error) {
	cfg, err := wire.Load(path, environ)
	if err != nil {
		return nil, nil, nil, err
	}
	opts, err := wire.IdentityOptions(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err := openRuntime(ctx, cfg, "bothy-owner")
	if err != nil {
		return nil, nil, nil, err
	}
	boot, err := app.NewBootstrap(rt.uow, postgres.New(rt.pool), auditpg.New(rt.pool, rt.clock), rt.clock, nil, opts)
	if err != nil {
		rt.pool.Close()
		return nil, nil, nil, err
	}
	return boot, cfg, rt.pool.Close, nil
}

// ownerPassword returns the first line of stdin, or a generated password on
// a terminal (generated is then true).
func ownerPassword(stdin io.Reader, terminal bool) (password string, generated bool, err error) {
	if terminal {
		b, err := stack.GeneratorPassword.Generate(rand.Reader)
		if err != nil {
			return "", false, err
		}
		return string(b), true, nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false, errors.New("reading the password from standard input failed")
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", false, fmt.Errorf("%w: standard input holds no password; pipe one line or run on a terminal to generate one", errUsage)
	}
	return line, false, nil
}

// signInExample is a curl call of createSession against the API listener
// (http.listen_address; a wildcard host becomes the loopback address). The
// body is read from a here-document, so the password never shows in the
// process list as a command-line argument.
func signInExample(listen, email string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil || host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	quoted, _ := json.Marshal(email)
	return fmt.Sprintf(`  curl -sS -X POST http://%s/api/v1/sessions \
    -H 'Content-Type: application/json' --data-binary @- <<'JSON'
  {"email": %s, "password": "<password>"}
  JSON
`, net.JoinHostPort(host, port), quoted)
}

// describe turns a validation or conflict error into a message that names
// the defective fields, for the operator at the terminal.
func describe(err error) error {
	e, ok := errs.As(err)
	if !ok || (e.Code != errs.CodeValidationFailed && e.Code != errs.CodeConflict) {
		return err
	}
	var parts []string
	for _, f := range e.Fields {
		parts = append(parts, strings.TrimPrefix(f.Pointer, "/")+": "+f.Code)
	}
	if e.Reason != "" {
		parts = append(parts, e.Reason)
	}
	return fmt.Errorf("%s (%s)", e.Code, strings.Join(parts, ", "))
}

// runtime is what the operations commands need of the database.
type runtime struct {
	pool    *pgxpool.Pool
	uow     *pg.UnitOfWork
	secrets *secrets.Provider
	clock   clock.Clock
}

// openRuntime connects as bothy_app (wire.OpenAppPool: database.url and
// database.password_ref) with the unit of work of database.tx_retry_max and
// database.lock_timeout.
func openRuntime(ctx context.Context, cfg *wire.Config, application string) (*runtime, error) {
	provider, err := wire.NewSecretsProvider(cfg)
	if err != nil {
		return nil, err
	}
	pool, err := wire.OpenAppPool(ctx, cfg, provider, application)
	if err != nil {
		return nil, err
	}
	return &runtime{pool: pool, uow: pg.NewUnitOfWork(pool, cfg.Database.TxRetryMax, cfg.Database.LockTimeout),
		secrets: provider, clock: clock.Real{}}, nil
}
