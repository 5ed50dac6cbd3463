package cli

import "github.com/spf13/cobra"

// importSpecStoryCommand is filled in by its own change (see issue 29).
func (a *app) importSpecStoryCommand() *cobra.Command {
	return &cobra.Command{Use: "specstory PATH", Hidden: true, Args: args(cobra.ExactArgs(1)), RunE: func(c *cobra.Command, argv []string) error { return usageError(c, "not built yet") }}
}
