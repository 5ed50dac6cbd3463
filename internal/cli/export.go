package cli

import "github.com/spf13/cobra"

// exportCommand is `export`: the vault's notes written in other formats.
func (a *app) exportCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "export",
		Short: "Write the vault's notes in other formats (the vault stays the source of truth)",
	}
	c.AddCommand(a.exportAISessionCommand())
	return c
}
