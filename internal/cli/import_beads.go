package cli

import "github.com/spf13/cobra"

// importBeadsCommand is filled in by its own change (see issue 29).
func (a *app) importBeadsCommand() *cobra.Command {
	return &cobra.Command{Use: "beads PATH", Hidden: true, Args: args(cobra.ExactArgs(1)), RunE: func(c *cobra.Command, argv []string) error { return usageError(c, "not built yet") }}
}
