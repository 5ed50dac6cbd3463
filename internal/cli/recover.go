package cli

import "github.com/spf13/cobra"

func (a *app) recoverCommand() *cobra.Command {
	var id string
	var force bool
	c := &cobra.Command{
		Use:   "recover [--session ID]",
		Short: "Resume a crashed session (no sign of life for heartbeat_timeout)",
		Long: `A session whose last sign of life (heartbeat, update, start) is older than
heartbeat_timeout (default 30m) is crashed. recover resumes it: the session is
active again and an update records the recovery. --session names the session
to recover and must be the current one.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := svc.Recover(a.project, id, force)
			if err != nil {
				return err
			}
			return a.emit(out, "recovered "+out.ID)
		},
	}
	c.Flags().StringVar(&id, "session", "", "the session to recover (default: the current one)")
	c.Flags().BoolVar(&force, "force", false, "recover even if the session is not stale")
	return c
}
