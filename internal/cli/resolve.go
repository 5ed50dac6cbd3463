package cli

import "github.com/spf13/cobra"

func (a *app) resolveCommand() *cobra.Command {
	var resolution string
	c := &cobra.Command{
		Use:   "resolve BLOCKER_ID",
		Short: "Mark a blocker of the active session resolved",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := svc.Resolve(a.project, argv[0], resolution)
			if err != nil {
				return err
			}
			return a.emit(out, "resolved "+out.ID)
		},
	}
	c.Flags().StringVar(&resolution, "resolution", "", "how it was resolved")
	return c
}
