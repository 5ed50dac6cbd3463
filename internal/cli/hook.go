package cli

import (
	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

func (a *app) hookCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "hook pre-tool-use|post-tool-use|post-tool-use-failure|session-start|pre-compact|stop",
		Short: "Answer a Claude Code hook: reads its JSON on stdin, answers by the hooks protocol",
		Long: `Run by Claude Code (see ` + "`sessionvault hooks install`" + `). Reads the hook's JSON on
stdin and answers by the hooks protocol:

  pre-tool-use   exit 2 with the reason on stderr to deny a tool call; fails closed
                 (denies) when the state cannot be read or verified, except for
                 read-only tools, which always pass
  post-tool-use  records a heartbeat (no commit) and, for a Bash or MCP tool
                 call, an entry of the session's command history
                 (sessions/<id>/commands.md)
  post-tool-use-failure  the same for a call that failed
  session-start  prints the resume prompt as additional context (8 KB at most)
  pre-compact    records a recovery point
  stop           {"decision":"block"} while MUST items of the end checklist are open,
                 once (not again when stop_hook_active is true)`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			hargs := []string{"--vault", a.vaultDir, "--project", a.project, argv[0]}
			a.exit = claudecode.Main(hargs, a.stdin, a.stdout, a.stderr, newHookHandler)
			return nil
		},
	}
}

// hookHandler builds the hook handler for --vault and --project, for the
// code repository at $CLAUDE_PROJECT_DIR, else the working directory.
func (a *app) hookHandler() claudecode.Handler {
	return claudecode.HandlerFor(newHookHandler, a.vaultDir, a.project, "")
}

// newHookHandler locates the vault for the flags and the code repository at
// cwd (vault.Locate), opens it, and builds the hook handler on it (or on why
// there is none: reading calls still pass). cmd/sessionvault-hook wires the
// same.
func newHookHandler(vaultDir, project, cwd string) claudecode.Handler {
	dir, project, err := vault.Locate(vaultDir, project, cwd)
	if err != nil {
		return claudecode.NewHandler(nil, project, claudecode.Unlinked(err, cwd))
	}
	v, err := vault.Open(dir)
	if err == nil {
		session.RefreshHookSettings(v.Root) // the lean hook's copy (it reads no YAML)
	}
	return claudecode.NewHandler(v, project, err)
}

// policyFrom is the vault's tool policy.
func policyFrom(v *vault.Vault) protocol.Policy { return claudecode.PolicyFrom(v.Config) }
