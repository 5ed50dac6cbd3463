package cli

import (
	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/session"
)

func (a *app) decideCommand() *cobra.Command {
	var o session.DecideOptions
	c := &cobra.Command{
		Use:   "decide --title T --choice C --rationale R [--decided-by AGENT] [--approved-by AGENT]... [--rejected-by AGENT]...",
		Short: "Record a decision of the active session",
		Long: `Records a decision: an entry (^d-N) in the current state, its own note in
decisions/<date>-<slug>.md linked both ways, and a line at the top of
session-decisions.md — one commit. Titles are unique within a session.
--decided-by, --approved-by and --rejected-by name agent types (the orchestrator
workflow's, and the vault's agent_types); they go into the decision's line and its note.

--cite records what the decision rests on in the code repository (a file, a
range of its lines, a commit) with what it was then: when the code changes,
status and the resume prompt mark the decision stale ("2 commits touched
auth.go since"), so that it is checked before it is relied on.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := requireFlags(c, "title", "choice", "rationale"); err != nil {
				return err
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			out, err := svc.Decide(o)
			if err != nil {
				return err
			}
			return a.emit(out, out.ID)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Title, "title", "", "short title, unique within the session (required)")
	f.StringVar(&o.Choice, "choice", "", "what was chosen (required)")
	f.StringVar(&o.Rationale, "rationale", "", "why (required)")
	f.StringArrayVar(&o.Alternatives, "alternative", nil, "an alternative considered (repeatable)")
	f.StringVar(&o.Impact, "impact", "medium", "low, medium or high")
	f.StringVar(&o.Category, "category", "", "category, e.g. architecture")
	f.StringVar(&o.DecidedBy, "decided-by", "", "the agent type that decided it, e.g. architect")
	f.StringArrayVar(&o.ApprovedBy, "approved-by", nil, "an agent type that approved it (repeatable)")
	f.StringArrayVar(&o.RejectedBy, "rejected-by", nil, "an agent type that rejected it (repeatable)")
	f.StringArrayVar(&o.Cite, "cite", nil, "what it rests on in the code: PATH, PATH#L10-L20 or a commit (repeatable); status and the resume prompt say when that code changed since")
	return c
}
