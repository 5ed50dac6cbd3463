package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) blockCommand() *cobra.Command {
	var severity string
	c := &cobra.Command{
		Use:   "block DESCRIPTION",
		Short: "Record a blocker in the active session and print its id (b-N)",
		Long: `Adds an open blocker to the Blockers section as a task item (- [ ] ... ^b-N).
Resolve it with ` + "`sessionvault resolve b-N`" + `, or tick its box in Obsidian.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := svc.Block(a.project, strings.Join(argv, " "), severity)
			if err != nil {
				return err
			}
			return a.emit(out, out.ID)
		},
	}
	c.Flags().StringVar(&severity, "severity", "medium", "low, medium, high or critical")
	return c
}
