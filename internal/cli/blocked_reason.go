package cli

import (
	"encoding/json"

	"github.com/spf13/cobra"
)

func (a *app) blockedReasonCommand() *cobra.Command {
	var tool, command string
	c := &cobra.Command{
		Use:   "blocked-reason [--tool NAME] [--command LINE]",
		Short: "Say why the PreToolUse hook would block a tool now (default Edit), and what to do",
		Long: `Asks the hook's policy whether a tool call may run now, and why not. --command
gives a Bash command line to judge (reading command lines pass where writing
ones do not); without it, Bash means a command that writes or runs code.
Answering is success: it exits 0 whether the tool is allowed or blocked.
Scripts read the answer from --json: "allowed" is false (and "blocked" true,
with the "reason") when the hook would block the call.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			input, _ := json.Marshal(map[string]string{"command": command})
			allowed, reason := a.hookHandler().Decide(tool, input, "")
			if allowed {
				return a.emit(map[string]any{"tool": tool, "allowed": true, "blocked": false}, tool+" is allowed")
			}
			return a.emit(map[string]any{"tool": tool, "allowed": false, "blocked": true, "reason": reason}, tool+" is blocked: "+reason)
		},
	}
	c.Flags().StringVar(&tool, "tool", "Edit", "the Claude Code tool name")
	c.Flags().StringVar(&command, "command", "", "a Bash command line to judge (with --tool Bash)")
	return c
}
