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

// The specs of `bothy keys` and `bothy keys rotate`.
var (
	keysRotateSpec = spec{name: "keys rotate", args: "--purpose PURPOSE [flags]",
		summary: "run the next rotation step of the server signing keys of one purpose now",
		example: "bothy keys rotate --purpose webhook_out --config /etc/bothy/config.yaml"}
	keysGroup = group{
		spec: spec{name: "keys", args: "COMMAND [flags]",
			summary: "rotate the server signing keys of a purpose by hand",
			example: "bothy keys rotate --purpose webhook_out"},
		subs: []spec{keysRotateSpec},
	}
)

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
func keysCommand(ctx context.Context, args, environ []string, stdout, _ io.Writer) error {
	_, rest, done, err := keysGroup.pick(args, stdout)
	if done || err != nil {
		return err
	}
	fs := newFlags(keysRotateSpec, stdout)
	path := configFlag(fs)
	purpose := fs.String("purpose", "", "key `purpose`: webhook_out or agent_token (required)")
	if help, err := fs.parse(rest); help || err != nil {
		return err
	}
	p := instance.Purpose(*purpose)
	if !p.Valid() {
		return usagef(keysRotateSpec.name, "--purpose must be webhook_out or agent_token")
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
