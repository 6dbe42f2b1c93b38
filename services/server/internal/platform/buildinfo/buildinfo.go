// Package buildinfo tells which build of bothy is running. The version shows
// in `bothy version`, in the User-Agent of outgoing webhooks
// (chat-server-webhooks/<version>) and in telemetry resources.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// version is set at link time: -ldflags "-X bothy/server/internal/platform/buildinfo.version=1.2.3".
var version string

var (
	once     sync.Once
	resolved string
)

// Version returns the link-time version, else the module version or VCS
// revision recorded by the Go toolchain, else "dev". It never returns "".
func Version() string {
	once.Do(func() {
		resolved = version
		if resolved != "" {
			return
		}
		resolved = "dev"
		info, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		if v := info.Main.Version; v != "" && v != "(devel)" {
			resolved = v
			return
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				resolved = "dev-" + s.Value[:12]
			}
		}
	})
	return resolved
}
