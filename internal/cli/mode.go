package cli

import (
	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/protocol"
)

func (a *app) modeCommand() *cobra.Command {
	c := &cobra.Command{Use: "mode set MODE", Short: "Set the mode: analysis, planning, coding or disabled"}
	c.AddCommand(&cobra.Command{
		Use:   "set analysis|planning|coding|disabled",
		Short: "Record a mode change (disabled turns the gates off: a person's escape hatch)",
		Long: `Sets what kind of work the PreToolUse hook allows: analysis blocks editing tools
and Bash, planning blocks editing tools, coding blocks nothing the mode decides.
disabled turns every gate off; it is the person's escape hatch and the hook does
not let the agent set it. Each change is recorded in the Mode history section.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			mode, err := protocol.ParseMode(argv[0])
			if err != nil {
				return usageError(c, err.Error())
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := svc.SetMode(a.project, mode)
			if err != nil {
				return err
			}
			return a.emit(out, "mode "+string(mode))
		},
	})
	return c
}
