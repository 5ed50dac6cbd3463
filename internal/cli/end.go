package cli

import (
	"fmt"
	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/spf13/cobra"
)

func (a *app) endCommand() *cobra.Command {
	var summary string
	var next []string
	c := &cobra.Command{
		Use:   "end [--summary S] [--next STEP]...",
		Short: "End the active session: archive it and leave the current state idle",
		Long: `Archives the session to sessions/<id>.md, adds it to session-history.md (the last
10 in full, older ones as links) and leaves session-current-state.md idle with a
link to it — one commit.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := svc.End(a.project, summary, next)
			if err != nil {
				return err
			}
			text := "ended " + out.ID + " in phase " + out.Phase
			if len(out.Violations) > 0 {
				text += fmt.Sprintf(" — %d unmet MUST item(s) of the end checklist, logged as CRITICAL in session-violations-log.md:", len(out.Violations))
				for _, m := range out.Violations {
					text += "\n  " + m.ID + " " + m.Step
				}
			}
			if len(out.Unmet) > 0 {
				text += fmt.Sprintf("\n%d SHOULD item(s) unmet (nothing blocked; next time):", len(out.Unmet))
				for _, m := range out.Unmet {
					text += "\n  " + m.ID + " " + m.Step + ": " + svc.Runnable(a.project, m.Do, "")
				}
			}
			// What the session claimed is free for others at once.
			claims, cerr := tasks.New(svc).ReleaseSessionClaims(a.project, out.ID)
			for _, c := range claims {
				text += "\n" + tasks.ClaimText(c)
			}
			if cerr != nil {
				text += "\nthe session's task claims were not released (they end with their lease): " + cerr.Error()
			}
			return a.emit(out, text)
		},
	}
	c.Flags().StringVar(&summary, "summary", "", "what the session did")
	c.Flags().StringArrayVar(&next, "next", nil, "a next step (repeatable)")
	return c
}
