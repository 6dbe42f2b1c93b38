package main

import (
	"context"
	"fmt"
	"io"

	"bothy/server/internal/platform/buildinfo"
)

func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) error {
	_, err := fmt.Fprintln(stdout, buildinfo.Version())
	return err
}
