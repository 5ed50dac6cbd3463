package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

func (a *app) hookCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "hook pre-tool-use|post-tool-use|session-start|pre-compact|stop",
		Short: "Answer a Claude Code hook: reads its JSON on stdin, answers by the hooks protocol",
		Long: `Run by Claude Code (see ` + "`sessionvault hooks install`" + `). Reads the hook's JSON on
stdin and answers by the hooks protocol:

  pre-tool-use   exit 2 with the reason on stderr to deny a tool call; fails closed
                 (denies) when the state cannot be read or verified, except for
                 read-only tools, which always pass
  post-tool-use  records a heartbeat (no commit)
  session-start  prints the resume prompt as additional context (8 KB at most)
  pre-compact    records a recovery point
  stop           {"decision":"block"} while MUST items of the end checklist are open,
                 once (not again when stop_hook_active is true)`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			data, err := io.ReadAll(io.LimitReader(a.stdin, 4<<20))
			h := a.hookHandler()
			var resp claudecode.Response
			in, perr := claudecode.ParseInput(data)
			switch {
			case err != nil || perr != nil:
				if argv[0] != "pre-tool-use" {
					return nil
				}
				resp = claudecode.Deny(fmt.Sprintf("the hook input cannot be read (%v %v); failing closed", err, perr))
			case argv[0] == "pre-tool-use":
				resp = h.PreToolUse(in)
			case argv[0] == "post-tool-use":
				resp = h.PostToolUse(in)
			case argv[0] == "session-start":
				resp = h.SessionStart(in)
			case argv[0] == "pre-compact":
				resp = h.PreCompact(in)
			case argv[0] == "stop":
				resp = h.Stop(in)
			default:
				return usageError(c, fmt.Sprintf("unknown hook %q", argv[0]))
			}
			io.WriteString(a.stdout, resp.Stdout)
			io.WriteString(a.stderr, resp.Stderr)
			a.exit = resp.Exit
			return nil
		},
	}
}

// hookHandler builds the hook handler: the policy comes from the vault's
// config when it can be read, else the built-in one (read-only tools still
// pass; everything else fails closed when the vault cannot be opened).
func (a *app) hookHandler() claudecode.Handler {
	policy := protocol.DefaultPolicy()
	var svc *session.Service
	var openErr error
	v, err := a.openVault()
	if err != nil {
		openErr = err
	} else {
		policy = policyFrom(v)
		svc, openErr = a.service()
	}
	return claudecode.Handler{
		Open:    func() (*session.Service, error) { return svc, openErr },
		Project: a.project,
		Policy:  policy,
	}
}

// policyFrom applies the config's tool policy over the built-in one.
func policyFrom(v *vault.Vault) protocol.Policy {
	p := protocol.DefaultPolicy()
	if len(v.Config.ReadOnlyTools) > 0 {
		p.ReadOnly = v.Config.ReadOnlyTools
	}
	for m, tools := range v.Config.ModeBlocks {
		if mode, err := protocol.ParseMode(m); err == nil {
			p.Blocks[mode] = tools
		}
	}
	return p
}
