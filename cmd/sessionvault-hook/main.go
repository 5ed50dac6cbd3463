// Command sessionvault-hook answers Claude Code hooks only — the same code as
// `sessionvault hook`, linked without the CLI, MCP, Linear and daemon
// packages so that it starts faster on every tool call. Usage:
//
//	sessionvault-hook [--vault DIR] [--project P] pre-tool-use|post-tool-use|session-start|pre-compact|stop
package main

import (
	"os"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
)

func main() {
	os.Exit(claudecode.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
