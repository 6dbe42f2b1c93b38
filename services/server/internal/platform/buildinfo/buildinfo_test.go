package buildinfo_test

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"bothy/server/internal/platform/buildinfo"
)

func TestVersionIsNeverEmpty(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, buildinfo.Version())
	require.Equal(t, buildinfo.Version(), buildinfo.Version(), "stable across calls")
}

func TestFromBuildInfo(t *testing.T) {
	t.Parallel()
	vcs := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "bothy/server", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "1cc6026abcdef0123456789"},
			{Key: "vcs.time", Value: "2026-12-01T21:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		name        string
		bi          *debug.BuildInfo
		linkVersion string
		want        buildinfo.Info
	}{
		{"make build stamps the version and the build time", vcs, "1.2.3", buildinfo.Info{
			Version: "1.2.3", Module: "bothy/server (devel)", Revision: "1cc6026abcdef0123456789", Modified: true,
			CommitTime: "2026-12-01T21:00:00Z", BuildTime: "2026-12-01T22:00:00Z", GoVersion: "go1.26.8"}},
		{"a plain go build names the revision", vcs, "", buildinfo.Info{
			Version: "dev-1cc6026abcde", Module: "bothy/server (devel)", Revision: "1cc6026abcdef0123456789", Modified: true,
			CommitTime: "2026-12-01T21:00:00Z", BuildTime: "2026-12-01T22:00:00Z", GoVersion: "go1.26.8"}},
		{"go install of a tagged module names its version", &debug.BuildInfo{Main: debug.Module{Path: "bothy/server", Version: "v1.4.0"}}, "",
			buildinfo.Info{Version: "v1.4.0", Module: "bothy/server v1.4.0", BuildTime: "2026-12-01T22:00:00Z"}},
		{"no build info at all", nil, "", buildinfo.Info{Version: "dev", BuildTime: "2026-12-01T22:00:00Z"}},
	} {
		require.Equal(t, tc.want, buildinfo.FromBuildInfo(tc.bi, buildinfo.Stamp{Version: tc.linkVersion, BuildTime: "2026-12-01T22:00:00Z"}), tc.name)
	}
	// Without VCS stamping (GOFLAGS=-buildvcs=false) the revision comes
	// from make build's stamp.
	noVCS := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "bothy/server", Version: "(devel)"}}
	for _, tc := range []struct {
		name    string
		version string
		want    string
	}{{"with a stamped version", "5e516ef-dirty", "5e516ef-dirty"}, {"without one", "", "dev-5e516ef7c7bd"}} {
		in := buildinfo.FromBuildInfo(noVCS, buildinfo.Stamp{Version: tc.version, Revision: "5e516ef7c7bdd5110c46e5a413e6b3d59668248c"})
		require.Equal(t, "5e516ef7c7bdd5110c46e5a413e6b3d59668248c", in.Revision, tc.name)
		require.Equal(t, tc.want, in.Version, tc.name)
	}
}
