// Package buildinfo tells which build of bothy is running. The version shows
// in `bothy version`, in the User-Agent of outgoing webhooks
// (chat-server-webhooks/<version>) and in telemetry resources.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Set at link time by `make build`:
//
//	-ldflags "-X bothy/server/internal/platform/buildinfo.version=1.2.3
//	          -X bothy/server/internal/platform/buildinfo.revision=<git rev-parse HEAD>
//	          -X bothy/server/internal/platform/buildinfo.buildTime=2026-12-01T22:00:00Z"
//
// revision is the fallback for builds without VCS stamping (GOFLAGS
// -buildvcs=false, or a checkout the toolchain cannot read).
var (
	version   string
	revision  string
	buildTime string
)

// Info describes one build. Every field but Version may be empty when the
// toolchain recorded nothing (a test binary, `go run`, a build outside a
// VCS checkout).
type Info struct {
	// Version is the link-time version, else the module version, else
	// "dev-" and the first 12 characters of the VCS revision, else "dev".
	// Never empty.
	Version string
	// Module is the main module path and its version as the toolchain
	// recorded it, for example "bothy/server (devel)".
	Module string
	// Revision is the VCS revision (vcs.revision); Modified is true when
	// the work tree had uncommitted changes (vcs.modified).
	Revision string
	Modified bool
	// CommitTime is the time of the revision (vcs.time), RFC 3339.
	CommitTime string
	// BuildTime is the link-time build time, RFC 3339.
	BuildTime string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

var read = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return FromBuildInfo(bi, Stamp{Version: version, Revision: revision, BuildTime: buildTime})
})

// Stamp is what `make build` links into the binary; empty fields were not
// stamped.
type Stamp struct {
	// Version, Revision and BuildTime are the link-time version, VCS
	// revision and build time (RFC 3339).
	Version, Revision, BuildTime string
}

// Current returns the Info of the running binary, read once.
func Current() Info { return read() }

// Version returns Current().Version. It never returns "".
func Version() string { return read().Version }

// FromBuildInfo builds the Info of bi (nil when the binary carries none)
// and the link-time stamp st. The toolchain's VCS revision wins over the
// stamped one; the stamped version wins over the module version.
func FromBuildInfo(bi *debug.BuildInfo, st Stamp) Info {
	in := Info{Version: st.Version, BuildTime: st.BuildTime}
	if bi != nil {
		in.GoVersion = bi.GoVersion
		if bi.Main.Path != "" {
			in.Module = bi.Main.Path + " " + bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Revision = s.Value
			case "vcs.time":
				in.CommitTime = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
	}
	if in.Revision == "" {
		in.Revision = st.Revision
	}
	if in.Version == "" && len(in.Revision) >= 12 {
		in.Version = "dev-" + in.Revision[:12]
	}
	if in.Version == "" {
		in.Version = "dev"
	}
	return in
}
