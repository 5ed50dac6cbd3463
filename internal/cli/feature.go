package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
)

// featureCommand is `feature`: feature plans on the CLI.
func (a *app) featureCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "feature",
		Short: "Feature plans: one note per feature in <project>/features/",
		Long: `A feature is a note, <project>/features/<feature-id>.md, its id {slug}-{YYYY-MM-DD}
(e.g. ai-orchestrator-2025-01-09). Its properties are its name, description,
status (active, paused, completed), started_at and last_active; its body is the
implementation plan, one "## Phase: <name>" section per phase and one line per
task (task id, description, agent, status, started/completed times, artifacts).
A task id links to the task's note in <project>/tasks/ when there is one. Edit the
plan in Obsidian — tick a task's box, change its status word — and sessionvault
reads it back. The active features are a query over these notes (feature list
--status active, and the features.base view in Obsidian). The session's active
feature (feature new, feature switch) is named by the command history.`,
	}
	c.AddCommand(a.featureNewCommand(), a.featureListCommand(), a.featureShowCommand(),
		a.featureSetStatusCommand(), a.featureSwitchCommand(), a.featurePlanCommand())
	return c
}

func (a *app) featureNewCommand() *cobra.Command {
	var o features.NewFeatureOptions
	c := &cobra.Command{
		Use:   "new NAME",
		Short: "Make a feature note (active) and print its id; with a session active, it becomes the session's active feature",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.Name = a.project, strings.Join(argv, " ")
			out, err := features.New(svc).FeatureNew(o)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.emit(map[string]any{"feature_id": out.Feature.ID, "note": out.Feature.Note, "session": out.Session, "commit": out.Result.Commit, "feature": out.Feature}, "")
			}
			return a.emit(nil, out.Feature.ID)
		},
	}
	c.Flags().StringVar(&o.ID, "id", "", "the feature id, {slug}-{YYYY-MM-DD} (default: the name's slug and today's date)")
	c.Flags().StringVar(&o.Description, "description", "", "what the feature is")
	return c
}

func (a *app) featureListCommand() *cobra.Command {
	var status string
	c := &cobra.Command{
		Use:   "list",
		Short: "List the project's features: id, status, last active, name (--status active: the active features)",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			features, err := features.New(svc).Features(project, status)
			if err != nil {
				return err
			}
			current := ""
			if st, err := svc.Current(project); err == nil && st.Active() {
				current = st.ActiveFeature
			}
			var lines []string
			for _, f := range features {
				mark := ""
				if f.ID == current {
					mark = " (the session's active feature)"
				}
				lines = append(lines, fmt.Sprintf("%-36s %-9s %-20s %s%s", f.ID, f.Status, timeText(f.LastActive), f.Name, mark))
			}
			if len(lines) == 0 {
				lines = []string{"no features; make one with `" + svc.Command(a.project, "feature new NAME") + "`"}
				if status != "" {
					lines = []string{"no " + status + " features"}
				}
			}
			return a.emit(map[string]any{"features": features, "active_feature": current}, strings.Join(lines, "\n"))
		},
	}
	c.Flags().StringVar(&status, "status", "", "only features with this status: "+strings.Join(features.FeatureStatuses, ", "))
	return c
}

func timeText(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return note.FormatTime(*t)
}

func (a *app) featureShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show FEATURE",
		Short: "Show a feature and its implementation plan",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			f, err := features.New(svc).Feature(a.project, argv[0])
			if err != nil {
				return err
			}
			return a.emit(f, formatFeature(f))
		},
	}
}

func formatFeature(f features.Feature) string {
	var b strings.Builder
	fmt.Fprintf(&b, "feature %s: %s (%s)\n", f.ID, f.Name, f.Status)
	if f.Description != "" {
		fmt.Fprintf(&b, "%s\n", f.Description)
	}
	fmt.Fprintf(&b, "started %s · last active %s\n", timeText(f.StartedAt), timeText(f.LastActive))
	if len(f.Phases) == 0 {
		b.WriteString("no plan yet: add a task with `sessionvault feature plan " + f.ID + " --phase NAME --task ID --description ...`\n")
	}
	for _, p := range f.Phases {
		fmt.Fprintf(&b, "\nphase %s: %s\n", p.ID, p.Name)
		for _, t := range p.Tasks {
			box := " "
			if t.Status == session.TaskCompleted {
				box = "x"
			}
			fmt.Fprintf(&b, "  [%s] %-24s %-12s %-12s %s", box, t.TaskID, t.Status, dash(t.Agent), t.Description)
			if len(t.Artifacts) > 0 {
				fmt.Fprintf(&b, " (artifacts: %s)", strings.Join(t.Artifacts, ", "))
			}
			b.WriteString("\n")
		}
	}
	if len(f.Problems) > 0 {
		b.WriteString("\nproblems:\n")
		for _, p := range f.Problems {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func (a *app) featureSetStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "set-status FEATURE active|paused|completed",
		Short: "Change a feature's status; active makes it the session's active feature, paused or completed clears it",
		Long: `Changes a feature's status (active, paused, completed). A completed
feature is reopened (active) before it can be paused. With a session active,
making a feature active makes it the session's active feature; pausing or
completing the session's active feature leaves the session without one.`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := features.New(svc).SetFeatureStatus(a.project, argv[0], argv[1])
			if err != nil {
				return err
			}
			return a.emit(out, fmt.Sprintf("feature %s: %s", out.Feature.ID, out.Feature.Status))
		},
	}
}

func (a *app) featureSwitchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "switch FEATURE",
		Short: "Make FEATURE the active session's active feature (a paused one becomes active)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := features.New(svc).SwitchFeature(a.project, argv[0])
			if err != nil {
				return err
			}
			return a.emit(out, fmt.Sprintf("active feature of session %s: %s", out.Session, out.Feature.ID))
		},
	}
}

func (a *app) featurePlanCommand() *cobra.Command {
	var o features.PlanOptions
	var description, agent, status, started, completed string
	c := &cobra.Command{
		Use:   "plan FEATURE --task ID [--phase NAME] [--description TEXT] [--agent A] [--status S] [--artifact PATH]...",
		Short: "Add a task to a feature's implementation plan, or change one",
		Long: `Adds task --task to the plan of FEATURE, or changes it: only the fields given
change. A new task needs --phase and --description; a phase that is not in the
plan yet is added (its id is --phase-id, else the name's slug). Giving an
existing task another --phase moves it there.

--status is pending, in_progress, completed or blocked: a task gets its
started_at when it first leaves pending and its completed_at when it becomes
completed (--started-at and --completed-at set them: RFC 3339, or 2026-11-25T09:30
in the vault's time_zone). --artifact adds
a generated file to the task's artifacts (repeatable; --clear-artifacts first
empties them). The task id links to <project>/tasks/<id>.md when that note
exists. One commit; the feature's last_active becomes now.

  sessionvault feature plan ai-orchestrator-2025-01-09 --phase Core --task impl-core \
      --description 'Implement the core commands' --agent opus --status in_progress`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.FeatureID = a.project, argv[0]
			ch := c.Flags().Changed
			if ch("description") {
				o.Description = &description
			}
			if ch("agent") {
				o.Agent = &agent
			}
			if ch("status") {
				o.Status = &status
			}
			for flag, v := range map[string]string{"started-at": started, "completed-at": completed} {
				if !ch(flag) {
					continue
				}
				t, err := svc.ParseTime(v)
				if err != nil {
					return errs.New(errs.PlanValidationFailed, "--%s: %v", flag, err).With("flag", flag)
				}
				if flag == "started-at" {
					o.StartedAt = &t
				} else {
					o.CompletedAt = &t
				}
			}
			if o.TaskID == "" {
				return usageError(c, "feature plan needs --task ID")
			}
			out, err := features.New(svc).UpdatePlan(o)
			if err != nil {
				return err
			}
			t, p, _ := out.Feature.Task(o.TaskID)
			return a.emit(out, fmt.Sprintf("feature %s: task %s (phase %s) %s", out.Feature.ID, t.TaskID, p.ID, t.Status))
		},
	}
	c.Flags().StringVar(&o.TaskID, "task", "", "the task's id (required)")
	c.Flags().StringVar(&o.Phase, "phase", "", "the task's phase, by name or phase id (required for a new task)")
	c.Flags().StringVar(&o.PhaseID, "phase-id", "", "the id of a new phase (default: its name's slug)")
	c.Flags().StringVar(&description, "description", "", "what the task does (required for a new task)")
	c.Flags().StringVar(&agent, "agent", "", "the agent assigned, e.g. opus or agent-1")
	c.Flags().StringVar(&status, "status", "", strings.Join(features.PlanStatuses, ", ")+" (a new task: pending)")
	c.Flags().StringArrayVar(&o.Artifacts, "artifact", nil, "a file the task generated (repeatable; added to its artifacts)")
	c.Flags().BoolVar(&o.ClearArtifacts, "clear-artifacts", false, "empty the task's artifacts first")
	c.Flags().StringVar(&started, "started-at", "", "when the task started (RFC 3339, or 2026-11-25T09:30 in the vault's time_zone)")
	c.Flags().StringVar(&completed, "completed-at", "", "when the task was completed (RFC 3339, or 2026-11-25T09:30 in the vault's time_zone)")
	return c
}
