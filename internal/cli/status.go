package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/config"
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
as crashed. Each checklist item shows what satisfied it (observed by the
engine, or recorded), [~] when that evidence no longer holds (a file that
changed), and for what is unmet, what to do. Showing the state is itself the
start checklist's "read the current state". A decision whose cited code
changed since shows as stale. The session's mode is shown, and when the state was changed outside
sessionvault (it does not verify as the engine wrote it) status says so, with
what a person does: review the change and run 'sessionvault accept'.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			if p, err := svc.Project(a.project); err == nil {
				// The state shown is the state read: the start checklist's
				// "read the current state", observed.
				_ = svc.ObserveStateRead(p, "status") // without it, the item waits for another reading
			}
			st, err := svc.Status(a.project)
			if err != nil {
				return err
			}
			if v := svc.V.Config.Version; v < config.FormatVersion && !a.jsonOut {
				// A hint, not a warning: an older format keeps working.
				fmt.Fprintf(a.stderr, "sessionvault: this vault is in format %d; once every machine's sessionvault writes format %d, `sessionvault migrate` upgrades it\n", v, config.FormatVersion)
			}
			view := statusView{State: st, Mode: st.Mode, Integrity: svc.CheckState(st.Project)}
			if st.Active() {
				view.Mode = string(st.ModeOrDefault())
			}
			return a.emit(view, formatStatus(view, limit, func(text string) string { return svc.Runnable(st.Project, text, "") }))
		},
	}
	c.Flags().IntVar(&limit, "updates", 5, "how many of the latest updates to show")
	return c
}

// statusView is what `status` shows: the state as read, the mode the hooks
// apply (an active session's; a note without one is in coding), and whether
// the state verifies as the engine last wrote it.
type statusView struct {
	session.State
	Mode      string             `json:"mode,omitempty"`
	Integrity session.StateCheck `json:"integrity"`
}

// integrityLines say, when the state does not verify, why and what a
// person does; nothing when it verifies.
func integrityLines(c session.StateCheck) string {
	if c.Verified {
		return ""
	}
	head := "state not verified: "
	if c.ChangedOutside {
		head = "state changed outside sessionvault (the hooks deny every tool that writes until a person accepts it): "
	}
	s := head + c.Problem + "\n"
	if c.Fix != "" {
		s += "  fix: " + c.Fix + "\n"
	}
	return s
}

// formatStatus is status's text; runnable makes a `sessionvault ...`
// command in it runnable from any folder.
func formatStatus(v statusView, limit int, runnable func(string) string) string {
	st := v.State
	var b strings.Builder
	if !st.Active() {
		fmt.Fprintf(&b, "project %s: idle", st.Project)
		if st.LastSession != "" {
			fmt.Fprintf(&b, " (last session: %s)", st.LastSession)
		}
		if l := integrityLines(v.Integrity); l != "" {
			b.WriteString("\n" + strings.TrimRight(l, "\n"))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "project %s: session %s is %s\n", st.Project, st.Session, st.Status)
	b.WriteString(integrityLines(v.Integrity))
	fmt.Fprintf(&b, "objective: %s\nprogress:  %d%%\n", st.Objective, st.Progress)
	fmt.Fprintf(&b, "mode:      %s", v.Mode)
	if n := len(st.ModeHistory); n > 0 {
		m := st.ModeHistory[n-1]
		fmt.Fprintf(&b, " (%d change(s); last %s → %s at %s)", n, m.From, m.Mode, note.FormatTime(m.At))
	}
	b.WriteString("\n")
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
			switch {
			case it.Stale != "":
				mark = "~"
			case it.Unverified:
				mark = "?"
			case it.Done:
				mark = "x"
			}
			line := fmt.Sprintf("  [%s] %-6s %s %s", mark, it.Level, it.ID, it.Step)
			if it.Done && it.Evidence != "" {
				line += " — " + it.Evidence
			}
			b.WriteString(line + "\n")
			if it.Unverified {
				fmt.Fprintf(&b, "             ticked without recorded evidence, so not done: record it with `sessionvault evidence record %s ...` (`sessionvault gate validate` names the flags)\n", it.ID)
			} else if do := unmetDo(st.Gate, it.ID); do != "" {
				fmt.Fprintf(&b, "             %s\n", runnable(do))
			}
		}
	}
	for _, d := range st.Decisions {
		if d.Stale != "" {
			fmt.Fprintf(&b, "stale decision %s %s: %s; check it still holds\n", d.ID, d.Title, d.Stale)
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
	for _, p := range st.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	return strings.TrimRight(b.String(), "\n")
}

// unmetDo returns what to do about the unmet item id of a gate report, or "".
func unmetDo(r *session.GateReport, id string) string {
	if r == nil {
		return ""
	}
	for _, m := range append(append([]session.Missing{}, r.Must...), r.Should...) {
		if m.ID == id {
			return m.Do
		}
	}
	return ""
}
