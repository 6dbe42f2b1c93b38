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
	log, err := processLogger(cfg, stderr)
	if err != nil {
		return err
	}
	wire.ApplyRuntime(cfg)
	proc, err := wire.NewProcess(ctx, cfg, role, wire.Deps{Log: log})
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "starting", slog.String("bothy.role", string(role)))
	return proc.Run(ctx)
}

// processLogger is the logger of the commands that write log lines (serve,
// migrate): JSON records on w at log.level, the server's format
// (platform/otel). It fails when log.level is not a level.
func processLogger(cfg *wire.Config, w io.Writer) (*slog.Logger, error) {
	level, err := otel.ParseLevel(cfg.Log.Level)
	if err != nil {
		return nil, err
	}
	return otel.NewLogger(w, level), nil
}
