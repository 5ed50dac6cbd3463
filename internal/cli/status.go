package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
)

func (a *app) statusCommand() *cobra.Command {
	var limit int
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the current session (or idle): objective, progress, blockers, checklists, latest updates",
		Long: `Reads the current-state note, including a person's edits (ticked checklist items
and blockers, edited entries), and shows the session. Read-only: no commit.
An active session with no sign of life for longer than heartbeat_timeout shows
as crashed.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			st, err := svc.Status(a.project)
			if err != nil {
				return err
			}
			return a.emit(st, formatStatus(st, limit))
		},
	}
	c.Flags().IntVar(&limit, "updates", 5, "how many of the latest updates to show")
	return c
}

func formatStatus(st session.State, limit int) string {
	var b strings.Builder
	if !st.Active() {
		fmt.Fprintf(&b, "project %s: idle", st.Project)
		if st.LastSession != "" {
			fmt.Fprintf(&b, " (last session: %s)", st.LastSession)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "project %s: session %s is %s\n", st.Project, st.Session, st.Status)
	fmt.Fprintf(&b, "objective: %s\nprogress:  %d%%\n", st.Objective, st.Progress)
	if st.Branch != "" {
		fmt.Fprintf(&b, "branch:    %s\n", st.Branch)
	}
	if st.LastSign != nil {
		fmt.Fprintf(&b, "last sign of life: %s\n", note.FormatTime(*st.LastSign))
	}
	if open := st.OpenBlockers(); len(open) > 0 {
		fmt.Fprintf(&b, "open blockers:\n")
		for _, bl := range open {
			fmt.Fprintf(&b, "  %s [%s] %s\n", bl.ID, bl.Severity, bl.Text)
		}
	}
	for _, cl := range []struct {
		name  string
		items []session.CheckItem
	}{{"start checklist", st.StartChecklist}, {"end checklist", st.EndChecklist}} {
		if len(cl.items) == 0 {
			continue
		}
		done := 0
		for _, it := range cl.items {
			if it.Done {
				done++
			}
		}
		fmt.Fprintf(&b, "%s: %d/%d done\n", cl.name, done, len(cl.items))
		for _, it := range cl.items {
			mark := " "
			if it.Done {
				mark = "x"
			}
			if it.Unverified {
				mark = "?"
			}
			fmt.Fprintf(&b, "  [%s] %-6s %s\n", mark, it.Level, it.Step)
			if it.Unverified {
				fmt.Fprintf(&b, "             ticked without recorded evidence, so not done: record it with `sessionvault evidence record %s ...` (`sessionvault gate validate` names the flags)\n", it.ID)
			}
		}
	}
	if n := len(st.Updates); n > 0 {
		from := n - limit
		if from < 0 {
			from = 0
		}
		fmt.Fprintf(&b, "latest updates (%d of %d):\n", n-from, n)
		for _, u := range st.Updates[from:] {
			p := ""
			if u.Progress != nil {
				p = fmt.Sprintf(" %d%%", *u.Progress)
			}
			fmt.Fprintf(&b, "  %s %s %s%s: %s\n", u.ID, note.FormatTime(u.Time), u.Type, p, u.Message)
		}
	}
	if len(st.Decisions) > 0 {
		fmt.Fprintf(&b, "decisions: %d\n", len(st.Decisions))
	}
	if !st.Workflow.Empty() {
		for _, l := range workflowLines(st.Workflow, 3) {
			fmt.Fprintln(&b, l)
		}
	}
	if n := len(st.ModeHistory); n > 0 {
		m := st.ModeHistory[n-1]
		fmt.Fprintf(&b, "mode: %s (%d change(s); last %s → %s at %s)\n", st.ModeOrDefault(), n, m.From, m.Mode, note.FormatTime(m.At))
	}
	for _, p := range st.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	return strings.TrimRight(b.String(), "\n")
}
