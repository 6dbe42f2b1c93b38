package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"bothy/server/internal/instance"
	"bothy/server/internal/instance/adapters/masterkey"
	"bothy/server/internal/instance/adapters/postgres"
	"bothy/server/internal/instance/app"
	"bothy/server/internal/instance/domain"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/wire"
)

const keysUsage = "want rotate --purpose webhook_out|agent_token [--config FILE]"

// runKeys is `bothy keys rotate --purpose webhook_out`: it rotates the
// server signing keys of one purpose by hand. The first call publishes a
// new next key at once; a call once the next key has been published for
// agent.jwks_max_age promotes it (the old key retires agent.jwks_max_age
// later). The periodic maintenance job does the same on schedule
// (instance.signing_key_max_age). It never prints key material.
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return keysCommand(ctx, args, os.Environ(), stdout, stderr)
}

// keysCommand is runKeys with the environment passed in, for tests.
func keysCommand(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rotate" {
		return fmt.Errorf("%w: %s", errUsage, keysUsage)
	}
	fs := newFlagSet("keys rotate", stderr)
	path := configFlag(fs)
	purpose := fs.String("purpose", "", "key `purpose`: webhook_out or agent_token (required)")
	if help, err := parseFlags(fs, args[1:]); help || err != nil {
		return err
	}
	p := instance.Purpose(*purpose)
	if !p.Valid() {
		return fmt.Errorf("%w: %s", errUsage, keysUsage)
	}
	cfg, err := wire.Load(*path, environ)
	if err != nil {
		return err
	}
	rt, err := openRuntime(ctx, cfg, "bothy-keys")
	if err != nil {
		return err
	}
	defer rt.pool.Close()
	svc, err := instanceService(rt, cfg)
	if err != nil {
		return err
	}
	if err := svc.Ensure(ctx); err != nil {
		return err
	}
	rot, err := svc.RotateSigningKey(ctx, p)
	if err != nil {
		return err
	}
	if len(rot.Steps) == 0 {
		fmt.Fprintf(stdout, "%s: nothing to do now\n", p)
	}
	for _, st := range rot.Steps {
		switch st.Kind {
		case domain.StepPromote:
			fmt.Fprintf(stdout, "%s: promoted %s to active; %s is retiring\n", p, st.KID, st.Previous)
		default:
			fmt.Fprintf(stdout, "%s: %s %s\n", p, st.Kind, st.KID)
		}
	}
	for _, k := range rot.Keys {
		line := fmt.Sprintf("  %-8s %s", k.State, k.KeyID)
		if !k.NotAfter.IsZero() {
			line += " not_after " + k.NotAfter.Format(time.RFC3339)
		}
		fmt.Fprintln(stdout, line)
	}
	_, err = fmt.Fprintf(stdout, "next step due at %s (run this command again then, or let the maintenance job do it)\n", rot.NextDue.Format(time.RFC3339))
	return err
}

// instanceService assembles the instance module for the operations
// commands, as internal/wire does for the roles.
func instanceService(rt *runtime, cfg *wire.Config) (*app.Service, error) {
	store := postgres.New(rt.pool)
	master := masterkey.New(rt.secrets, cfg.Instance.SigningKeysMasterKeyRef)
	keys, err := app.NewKeys(store, master, rt.clock, app.KeysOptions{CacheTTL: cfg.Instance.KeyCacheTTL})
	if err != nil {
		return nil, err
	}
	return app.New(app.Deps{UnitOfWork: rt.uow, Store: store, Keys: keys, Master: master,
		Audit: auditpg.New(rt.pool, rt.clock), Clock: rt.clock},
		app.Options{Name: cfg.Instance.Name, Rotation: domain.Policy{PublishAhead: cfg.Agent.JWKSMaxAge, MaxAge: cfg.Instance.SigningKeyMaxAge}})
}
