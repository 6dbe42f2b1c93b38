package main

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"bothy/server/internal/platform/buildinfo"
)

var versionSpec = spec{name: "version", args: "",
	summary: "print the version, module, VCS revision, build time and Go version of this binary",
	example: "bothy version"}

// runVersion is `bothy version`: the build facts of runtime/debug build
// info and of the link-time stamp of `make build` (buildinfo.Current);
// "unknown" stands for what this build did not record.
func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlags(versionSpec, stdout)
	if help, err := fs.parse(args); help || err != nil {
		return err
	}
	in := buildinfo.Current()
	rev := cmp.Or(in.Revision, "unknown")
	if in.Modified {
		rev += " (modified)"
	}
	_, err := fmt.Fprintf(stdout, "bothy %s\n  module:   %s\n  revision: %s\n  commit:   %s\n  built:    %s\n  go:       %s\n",
		in.Version, cmp.Or(in.Module, "unknown"), rev, cmp.Or(in.CommitTime, "unknown"),
		cmp.Or(in.BuildTime, "unknown"), cmp.Or(in.GoVersion, "unknown"))
	return err
}
