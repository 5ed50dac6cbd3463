// Command sessionvault-hook answers Claude Code hooks only — the same code as
// `sessionvault hook`, linked without the CLI, MCP, Linear and daemon
// packages so that it starts faster on every tool call. Usage:
//
//	sessionvault-hook [--vault DIR] [--project P] pre-tool-use|post-tool-use|session-start|pre-compact|stop
//
// It wires its parts: the vault is located (vault.Locate) and opened here and
// handed to the hook handler (claudecode.NewHandler).
package main

import (
	"os"
	"runtime/debug"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/internal/vault"
)

func main() {
	// A hook lives for milliseconds: collecting garbage only pays past a
	// memory bound (64 MiB, far above what one decision allocates; a long
	// session's state read on a cache miss stays under it too).
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(64 << 20)
	os.Exit(claudecode.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, newHandler))
}

// newHandler locates the vault for the flags and the code repository at cwd
// as the CLI does, opens it, and builds the hook handler on it (or on why
// there is none: reading calls still pass).
func newHandler(vaultDir, project, cwd string) claudecode.Handler {
	dir, project, err := vault.Locate(vaultDir, project, cwd)
	if err != nil {
		return claudecode.NewHandler(nil, project, claudecode.Unlinked(err, cwd))
	}
	v, err := vault.Open(dir)
	return claudecode.NewHandler(v, project, err)
}
