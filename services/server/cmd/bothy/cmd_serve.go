package main

import (
	"context"
	"io"
	"log/slog"

	"bothy/server/internal/platform/otel"
	"bothy/server/internal/wire"
)

var serveSpec = spec{name: "serve", args: "[flags]",
	summary: "run the server in a role until SIGTERM: api (HTTP API), worker (consumers and jobs) or all",
	example: "bothy serve --role worker --config /etc/bothy/config.yaml"}

// runServe is `bothy serve --role api|worker|all`: it assembles the process
// and runs it until SIGINT or SIGTERM, then stops gracefully.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(serveSpec, stdout)
	path := configFlag(fs)
	roleName := fs.String("role", "all", "process `role`: api (HTTP API), worker (consumers and jobs) or all")
	if help, err := fs.parse(args); help || err != nil {
		return err
	}
	role, err := wire.ParseRole(*roleName)
	if err != nil {
		return usagef(serveSpec.name, "%v", err)
	}
	cfg, err := loadConfig(*path)
	if err != nil {
		return err
	}
	level, err := otel.ParseLevel(cfg.Log.Level)
	if err != nil {
		return err
	}
	log := otel.NewLogger(stderr, level)
	proc, err := wire.NewProcess(ctx, cfg, role, wire.Deps{Log: log})
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "starting", slog.String("bothy.role", string(role)))
	return proc.Run(ctx)
}
