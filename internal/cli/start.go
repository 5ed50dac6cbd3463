package cli

import (
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/session"
)

func (a *app) startCommand() *cobra.Command {
	var o session.StartOptions
	c := &cobra.Command{
		Use:   "start --objective TEXT",
		Short: "Start a session and print its id (YYYY-MM-DD-session-NN)",
		Long: `Starts a session in the project: the current-state note gets the objective, the
start and end checklists of the protocol, and empty updates, decisions and
blockers. Prints the new session id.

--branch and --commit default to the git state of the code repository: the
current folder's when it is in one (not the vault's), else the one the
project's last session worked in. The start checklist's items the engine can
see for itself are ticked at once: the objective, the state handed over by
Claude Code's SessionStart hook, the starting commit, the protocol's run
checks (run in the code repository). Fails if a session is
already active, unless --force, which archives that one as abandoned.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := requireFlags(c, "objective"); err != nil {
				return err
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			// The code repository: the current folder's, or (typed in the
			// vault) the one the project's last session worked in.
			repo := svc.CodeRepo(a.project)
			if !c.Flags().Changed("branch") {
				o.Branch = gitOutput(repo, "rev-parse", "--abbrev-ref", "HEAD")
			}
			if !c.Flags().Changed("commit") {
				o.Commit = gitOutput(repo, "rev-parse", "HEAD")
			}
			out, err := svc.Start(o)
			if err != nil {
				return err
			}
			return a.emit(out, out.ID)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Objective, "objective", "", "what this session is for (required, 1-500 characters)")
	f.StringVar(&o.Epic, "epic", "", "epic or larger goal this session belongs to")
	f.StringVar(&o.Linear, "linear", "", "Linear issue key the session works on, e.g. ENG-123")
	f.StringVar(&o.Branch, "branch", "", "code branch (default: the current folder's git branch)")
	f.StringVar(&o.Commit, "commit", "", "starting commit SHA (default: the current folder's HEAD)")
	f.StringVar(&o.Continue, "continue", "", "id of an archived session this one continues")
	f.BoolVar(&o.Force, "force", false, "abandon the active session (archived as abandoned) and start anyway")
	return c
}

// gitOutput runs git in the repository at dir and returns its trimmed
// output, or "" when dir is "" or not a git repository, or git is missing.
func gitOutput(dir string, argv ...string) string {
	if dir == "" {
		return ""
	}
	cmd := exec.Command("git", append([]string{"-C", dir}, argv...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	v := strings.TrimSpace(string(out))
	if v == "HEAD" {
		return ""
	}
	return v
}
