package cli

import (
	"runtime/debug"
	"strings"
)

// versionString is what `sessionvault --version` prints and what the MCP
// server reports: the module version (set by `go install …@vX` and release
// builds; "(devel)" for a build from a checkout), the VCS revision and
// whether the tree was modified, as the Go toolchain stamps them.
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return buildVersion() + " " + info.GoVersion
}

// buildVersion is versionString without the Go toolchain: what tells two
// builds of sessionvault apart.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified, at string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		case "vcs.time":
			at = s.Value
		}
	}
	var b strings.Builder
	b.WriteString(v)
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		b.WriteString(" (commit " + rev[:min(12, len(rev))] + modified)
		if at != "" {
			b.WriteString(", " + at)
		}
		b.WriteString(")")
	}
	return b.String()
}
