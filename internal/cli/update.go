package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

func (a *app) updateCommand() *cobra.Command {
	var o session.UpdateOptions
	var progress int
	var at string
	c := &cobra.Command{
		Use:   "update MESSAGE",
		Short: "Record progress, a note, a blocker or a milestone in the active session",
		Long: `Appends an update (1-500 characters) to the active session's Updates section,
with its block id (^u-N), and commits it. --progress sets the session's progress
(0-100). The type defaults to progress with --progress, else note.

--at records an update that happened earlier (RFC 3339, e.g.
2026-11-25T09:30:00Z, or 2026-11-25T09:30 in the vault's time_zone): the updates are a log whose times only go forward, so a
time before the session's last update, or in the future, is refused and
nothing changes.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			o.Message = strings.Join(argv, " ")
			if c.Flags().Changed("progress") {
				o.Progress = &progress
			}
			if at != "" {
				t, err := svc.ParseTime(at)
				if err != nil {
					return errs.New(errs.UpdateValidationFailed, "--at: %v", err).With("flag", "at")
				}
				o.At = &t
			}
			out, err := svc.Update(o)
			if err != nil {
				return err
			}
			return a.emit(out, out.ID)
		},
	}
	c.Flags().IntVar(&progress, "progress", 0, "session progress, 0-100")
	c.Flags().StringVar(&o.Type, "type", "", "progress, note, blocker or milestone")
	c.Flags().StringArrayVar(&o.Tags, "tag", nil, "tag for the update (repeatable)")
	c.Flags().StringVar(&at, "at", "", "when the update happened: RFC 3339, or 2026-11-25T09:30 in the vault's time_zone (default now; not before the last update)")
	return c
}
