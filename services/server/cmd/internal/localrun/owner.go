package localrun

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"

	identitypg "bothy/server/internal/identity/adapters/postgres"
	identityapp "bothy/server/internal/identity/app"
	"bothy/server/internal/kernel/clock"
	"bothy/server/internal/platform/auditpg"
	"bothy/server/internal/platform/pg"
	"bothy/server/internal/platform/secrets/stack"
	"bothy/server/internal/wire"
)

// CreateOwner creates the person email with display name name as owner
// with the identity bootstrap, the use case behind `bothy owner create`,
// over the database of cfg, and returns the password generated for it
// (kept in memory only). app names the connection (application_name). It
// fails when the database is unreachable or the person exists.
func CreateOwner(ctx context.Context, cfg *wire.Config, app, email, name string) (string, error) {
	secrets, err := wire.NewSecretsProvider(cfg)
	if err != nil {
		return "", err
	}
	pool, err := wire.OpenAppPool(ctx, cfg, secrets, app)
	if err != nil {
		return "", fmt.Errorf("connecting to the database: %w", err)
	}
	defer pool.Close()
	opts, err := wire.IdentityOptions(cfg)
	if err != nil {
		return "", err
	}
	clk := clock.Real{}
	boot, err := identityapp.NewBootstrap(pg.NewUnitOfWork(pool, cfg.Database.TxRetryMax, cfg.Database.LockTimeout),
		identitypg.New(pool), auditpg.New(pool, clk), clk, nil, opts)
	if err != nil {
		return "", err
	}
	password := GeneratePassword()
	if _, err := boot.CreateOwner(ctx, identityapp.CreatePerson{Email: email, DisplayName: name, Password: password}); err != nil {
		return "", fmt.Errorf("creating the owner: %w", err)
	}
	return password, nil
}

// GeneratePassword returns a password for one person of a run, from the
// generator of `bothy secrets init`. It panics when the system has no
// randomness, as crypto/rand itself does.
func GeneratePassword() string {
	b, err := stack.GeneratorPassword.Generate(rand.Reader)
	if err != nil {
		panic("localrun: no randomness for a password")
	}
	return string(b)
}

// FreeLoopbackAddresses returns n distinct 127.0.0.1 addresses whose
// ports were free a moment ago (a process listens on them right after).
func FreeLoopbackAddresses(n int) ([]string, error) {
	// Every listener stays open until all are chosen, so the ports differ.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}
