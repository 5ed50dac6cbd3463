// Command sessionvault-hook answers Claude Code hooks only — the same code as
// `sessionvault hook`, linked without the CLI, MCP, Linear and daemon
// packages so that it starts faster on every tool call. Usage:
//
//	sessionvault-hook [--vault DIR] [--project P] pre-tool-use|post-tool-use|session-start|pre-compact|stop
package main

import (
	"os"
	"runtime/debug"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
)

func main() {
	// A hook lives for milliseconds: collecting garbage only pays past a
	// memory bound (64 MiB, far above what one decision allocates; a long
	// session's state read on a cache miss stays under it too).
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(64 << 20)
	os.Exit(claudecode.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
