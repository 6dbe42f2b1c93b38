package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"bothy/server/internal/platform/pg"
	"bothy/server/internal/wire"
)

var migrateSpec = spec{name: "migrate", args: "[flags]",
	summary: "apply the migrations; with --bootstrap first create the roles and the database",
	example: "bothy migrate --bootstrap --admin-url-file /etc/bothy/admin_url --config /etc/bothy/config.yaml"}

// runMigrate is `bothy migrate [--bootstrap --admin-url-file FILE]`.
//
// With --bootstrap it first creates or updates the roles bothy_owner and
// bothy_app and the database, connecting with the administrator URL read from
// FILE (a file, so the superuser password never shows in the process list).
// Then it applies River's schema and the embedded migrations as the owner,
// logging each one with the server's JSON logger (processLogger), so
// `make run` writes one kind of log line.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return migrateCommand(ctx, args, os.Environ(), stdout, stderr)
}

// migrateCommand is runMigrate with the environment passed in, for tests.
func migrateCommand(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	fs := newFlags(migrateSpec, stdout)
	path := configFlag(fs)
	bootstrap := fs.Bool("bootstrap", false, "create the roles and the database first (needs --admin-url-file)")
	adminFile := fs.String("admin-url-file", "", "`file` holding a PostgreSQL URL of a superuser or a role with CREATEROLE and CREATEDB")
	if help, err := fs.parse(args); help || err != nil {
		return err
	}
	cfg, err := wire.Load(*path, environ)
	if err != nil {
		return err
	}
	sp, err := wire.NewSecretsProvider(cfg)
	if err != nil {
		return err
	}
	if *bootstrap {
		if *adminFile == "" {
			return usagef(migrateSpec.name, "--bootstrap needs --admin-url-file")
		}
		raw, err := os.ReadFile(*adminFile)
		if err != nil {
			return errors.New("cannot read the --admin-url-file")
		}
		opts, err := wire.BootstrapOptions(ctx, cfg, sp, strings.TrimSpace(string(raw)))
		if err != nil {
			return err
		}
		if err := pg.Bootstrap(ctx, opts); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "roles %s and %s and database %s are ready\n", pg.OwnerRole, pg.AppRole, opts.Database)
	}
	pool, err := wire.OpenOwnerPool(ctx, cfg, sp)
	if err != nil {
		return err
	}
	defer pool.Close()
	log, err := processLogger(cfg, stderr)
	if err != nil {
		return err
	}
	if err := pg.Migrate(ctx, pool, log); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, "schema is up to date")
	return err
}
