package cli

import (
	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/vault"
)

func (a *app) acceptCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "accept",
		Short: "A person accepts the current state as it is (after the hooks found it changed)",
		Long: `When session-current-state.md was changed outside sessionvault (the note
rewritten by an agent's tool, or edited while no sessionvault operation ran),
the PreToolUse hook denies every non-read-only tool. Review the change (the deny
and 'status' print the commands: git diff for what is not committed, git log -p
for an edit already committed as yours), then run accept: the edit is
committed as yours and the state is signed again. What the signature changes
is printed: the session, status, phase, mode and protocol as they are now.
Checklist ticks are never signed this way; only evidence the engine verified
(observed, or recorded with 'sessionvault evidence record') counts.
The hook does not let the agent run this.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			res, signed, err := svc.Accept(project)
			if err != nil {
				return err
			}
			text := "accepted the current state of " + project
			if res.PersonCommit != "" {
				text += "\ncommitted your edits as " + res.PersonCommit
			}
			if len(signed) == 0 {
				text += "\nsigned: nothing changed in the session, status, phase, mode or protocol"
			}
			for _, l := range signed {
				text += "\nsigned: " + l
			}
			return a.emit(struct {
				vault.Result
				Signed []string `json:"signed"`
			}{res, signed}, text)
		},
	}
}
