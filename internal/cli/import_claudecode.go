package cli

import "github.com/spf13/cobra"

// importClaudeCodeCommand is filled in by its own change (see issue 29).
func (a *app) importClaudeCodeCommand() *cobra.Command {
	return &cobra.Command{Use: "claude-code PATH", Hidden: true, Args: args(cobra.ExactArgs(1)), RunE: func(c *cobra.Command, argv []string) error { return usageError(c, "not built yet") }}
}
