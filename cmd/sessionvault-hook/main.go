// Command sessionvault-hook answers Claude Code hooks on every tool call, so
// its start-up is what each call pays: it decides PreToolUse calls from the
// policy table and the signed facts cache, records the PostToolUse calls
// that need no git (the heartbeat, the tool history, a command history
// entry), and hands everything else to
// `sessionvault hook` (see integrations/claudecode/leanhook). It links no
// git, note parser or CLI. Usage:
//
//	sessionvault-hook [--vault DIR] [--project P] pre-tool-use|post-tool-use|post-tool-use-failure|session-start|pre-compact|stop
package main

import (
	"os"
	"runtime/debug"

	"github.com/sessionvault/sessionvault/integrations/claudecode/leanhook"
)

func main() {
	// A hook lives for milliseconds: collecting garbage only pays past a
	// memory bound.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(64 << 20)
	os.Exit(leanhook.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
