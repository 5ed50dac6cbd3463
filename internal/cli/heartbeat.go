package cli

import (
	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/tasks"
)

func (a *app) heartbeatCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "heartbeat",
		Short: "Record a sign of life of the active session (no commit)",
		Long: `Records that the agent is alive, in .sessionvault/state (git-ignored; not a
commit). A session with no sign of life for heartbeat_timeout is crashed.
On a vault shared through a git remote, it also renews this machine's task
claims there that are past half their lease, and settles provisional ones.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			st, err := svc.Heartbeat(a.project)
			if err != nil {
				return err
			}
			claims, err := tasks.New(svc).ConfirmClaims()
			if err != nil {
				return err
			}
			text := "heartbeat " + st.Session + " " + note.FormatTime(*st.LastSign)
			for _, c := range claims {
				text += "\n" + tasks.ClaimText(c)
			}
			return a.emit(map[string]any{"session": st.Session, "last_heartbeat": st.LastSign, "claims": claims}, text)
		},
	}
}
