package cli

import (
	"github.com/spf13/cobra"
)

func (a *app) phaseCommand() *cobra.Command {
	c := &cobra.Command{Use: "phase advance", Short: "Move the session through its next gate"}
	c.AddCommand(&cobra.Command{
		Use:   "advance",
		Short: "INIT → WORKING through the start gate, WORKING → COMPLETE through the end gate",
		Long: `Advances the active session's phase: INIT to WORKING when every MUST of
the start checklist has evidence, WORKING to COMPLETE when every MUST of the end
checklist has. When the gate does not pass, the advance stops with the missing
evidence named, and the unmet MUSTs are appended to session-violations-log.md.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := svc.AdvancePhase(a.project)
			if err != nil {
				return err
			}
			return a.emit(out, "phase "+out.ID)
		},
	})
	return c
}
