package cli

import (
	"fmt"
	"strings"

	"github.com/sessionvault/sessionvault/internal/recovery"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/note"
)

// checkpointCommand is `checkpoint`: checkpoints as git tags.
func (a *app) checkpointCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "checkpoint",
		Short: "Checkpoints: named points in the vault's history (annotated tags checkpoint/<id>)",
	}
	c.AddCommand(a.checkpointCreateCommand(), a.checkpointListCommand(), a.checkpointSyncCommand())
	return c
}

func (a *app) checkpointSyncCommand() *cobra.Command {
	var taskIDs []string
	c := &cobra.Command{
		Use:   "sync",
		Short: "List every checkpoint tag in checkpoints.md and count the task contexts (MCP: sync_hot_context)",
		Long: `The notes are the store and git the history, so only the engine's derived notes
can lag behind: checkpoints.md gets a line for each checkpoint tag it does not list
(a tag fetched without its commit, or a listing a kill lost), in one commit.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := tasks.New(svc).SyncHotContext(a.project, taskIDs)
			if err != nil {
				return err
			}
			return a.emit(out, fmt.Sprintf("%d checkpoint(s) listed; %d task context(s); active task %s", out.CheckpointsListed, out.TaskContexts, dash(out.ActiveTask)))
		},
	}
	c.Flags().StringArrayVar(&taskIDs, "task", nil, "count only these tasks (repeatable)")
	return c
}

func (a *app) checkpointCreateCommand() *cobra.Command {
	var o tasks.CheckpointOptions
	c := &cobra.Command{
		Use:   "create LABEL",
		Short: "Create a checkpoint (MCP: create_checkpoint) and print its id",
		Long: `Commits a line in <project>/checkpoints.md and tags that commit
checkpoint/<id> (id cp-<unix time>-<random>). Its scope: no
--task is global (the project's canonical notes and tasks), one task, or
multi_task. Roll back to it with ` + "`sessionvault rollback --checkpoint ID`" + `.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.Label = a.project, strings.Join(argv, " ")
			out, err := tasks.New(svc).CreateCheckpoint(o)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.emit(out, "")
			}
			for _, w := range out.Result.Warnings {
				fmt.Fprintln(a.stderr, "sessionvault: warning:", w)
			}
			return a.emit(nil, out.Checkpoint.ID)
		},
	}
	c.Flags().StringArrayVar(&o.Tasks, "task", nil, "a task the checkpoint is of (repeatable; none: global)")
	c.Flags().StringVar(&o.Type, "type", "manual", strings.Join(tasks.CheckpointTypes, ", "))
	c.Flags().StringVar(&o.Description, "description", "", "what the checkpoint marks")
	return c
}

func (a *app) checkpointListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the project's checkpoints, oldest first",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			cps, err := tasks.New(svc).Checkpoints(a.project)
			if err != nil {
				return err
			}
			var lines []string
			for _, cp := range cps {
				scope := cp.Scope
				if len(cp.Tasks) > 0 {
					scope += " " + strings.Join(cp.Tasks, ",")
				}
				lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%s\t%s", cp.ID, note.FormatTime(cp.CreatedAt), cp.Type, scope, cp.Label))
			}
			return a.emit(map[string]any{"checkpoints": cps}, strings.Join(lines, "\n"))
		},
	}
}

func (a *app) rollbackCommand() *cobra.Command {
	var o tasks.RollbackOptions
	var noBackup bool
	c := &cobra.Command{
		Use:   "rollback (--checkpoint ID | --version N --task TASK)",
		Short: "Roll notes back to a checkpoint or a task version (MCP: rollback_to), as one new commit",
		Long: `Restores the engine's content of a task note (--task), of a checkpoint's tasks,
or — a global checkpoint — of the project's canonical notes and task notes, as one
new commit; history is never rewritten. Sections and properties a person added
stay as they are now. A backup checkpoint of the state before is made first
(--no-backup skips it); roll forward again with ` + "`sessionvault rollback --checkpoint BACKUP`" + `.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			ch := c.Flags().Changed
			switch {
			case !ch("checkpoint") && !ch("version"):
				return usageError(c, "rollback needs --checkpoint ID, or --version N with --task TASK")
			case ch("version") && !ch("task"):
				return usageError(c, "rollback --version N needs --task TASK (a version is one task's)")
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.NoBackup = a.project, noBackup
			out, err := tasks.New(svc).Rollback(o)
			if err != nil {
				return err
			}
			if !a.jsonOut {
				for _, w := range out.Result.Warnings {
					fmt.Fprintln(a.stderr, "sessionvault: warning:", w)
				}
			}
			text := fmt.Sprintf("rolled back %d note(s) to %s %v", len(out.Restored), out.RolledBackTo.Type, out.RolledBackTo.Identifier)
			if len(out.Restored) == 0 {
				text = fmt.Sprintf("nothing to roll back: the notes already hold %s %v", out.RolledBackTo.Type, out.RolledBackTo.Identifier)
			}
			if out.BackupCheckpointID != "" {
				text += "; backup checkpoint " + out.BackupCheckpointID
			}
			return a.emit(out, text)
		},
	}
	c.Flags().StringVar(&o.Checkpoint, "checkpoint", "", "the checkpoint id to roll back to")
	c.Flags().IntVar(&o.Version, "version", 0, "the task `VERSION` to roll back to (with --task; sessionvault task versions TASK lists them)")
	c.Flags().StringVar(&o.TaskID, "task", "", "roll back only this task's note")
	c.Flags().BoolVar(&noBackup, "no-backup", false, "make no backup checkpoint first")
	return c
}

// conflictsCommand is `conflicts`: conflict detection between tasks.
func (a *app) conflictsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "conflicts",
		Short: "Conflicts between tasks, recorded once each in <project>/conflicts.md",
	}
	c.AddCommand(a.conflictsDetectCommand(), a.conflictsResolveCommand(), a.conflictsListCommand())
	return c
}

func (a *app) conflictsDetectCommand() *cobra.Command {
	var taskIDs, types []string
	c := &cobra.Command{
		Use:   "detect",
		Short: "Find conflicts (MCP: detect_conflicts); new ones are recorded with ids",
		Long: `Types: file_conflict (active tasks sharing key files; high from 3 files,
strength min(n/5, 1)), lock_collision (a task lock held past its expiry),
state_mismatch (a task note edited since its last commit), version_divergence (a
task note changed on both sides of a merge). Conflicts found before are reported
as existing, with their status.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			res, err := tasks.New(svc).DetectConflicts(a.project, taskIDs, types)
			if err != nil {
				return err
			}
			var lines []string
			for _, x := range res.Detected {
				lines = append(lines, fmt.Sprintf("new %s %s %s %.2g: %s", x.ID, x.Type, x.Severity, x.Strength, x.Description))
			}
			for _, x := range res.Existing {
				lines = append(lines, fmt.Sprintf("existing %s %s %s (%s): %s", x.ID, x.Type, x.Severity, x.Status, x.Description))
			}
			lines = append(lines, fmt.Sprintf("%d new, %d existing (%d critical, %d high)", res.Summary.New, res.Summary.Existing, res.Summary.Critical, res.Summary.High))
			return a.emit(res, strings.Join(lines, "\n"))
		},
	}
	c.Flags().StringArrayVar(&taskIDs, "task", nil, "only conflicts of this task (repeatable)")
	c.Flags().StringArrayVar(&types, "type", nil, "only this conflict type (repeatable): "+strings.Join(tasks.ConflictTypes, ", "))
	return c
}

func (a *app) conflictsResolveCommand() *cobra.Command {
	var o tasks.ResolveOptions
	c := &cobra.Command{
		Use:   "resolve ID --action use_a|use_b|merge|custom|ignore",
		Short: "Resolve a recorded conflict (MCP: resolve_conflict)",
		Long: `Records the resolution in conflicts.md, with its side effects in the same
commit: a lock_collision's lock is released; a state_mismatch resolved use_b puts
the committed note back; a version_divergence resolved use_a or use_b restores the
merge's first or second parent's note. ignore marks it ignored (detect then
reports it as existing, not new).`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			if err := requireFlags(c, "action"); err != nil {
				return err
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.ID = a.project, argv[0]
			out, err := tasks.New(svc).ResolveConflict(o)
			if err != nil {
				return err
			}
			return a.emit(out, fmt.Sprintf("%s %s → %s", out.ConflictID, out.PreviousStatus, out.NewStatus))
		},
	}
	c.Flags().StringVar(&o.Action, "action", "", strings.Join(tasks.ConflictActions, ", "))
	c.Flags().StringVar(&o.Value, "value", "", "the resolved value (custom)")
	c.Flags().StringVar(&o.Notes, "notes", "", "why")
	c.Flags().StringVar(&o.ResolvedBy, "by", "", "who resolved it (default: the active session, else this machine)")
	return c
}

func (a *app) conflictsListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the recorded conflicts",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			cs, err := tasks.New(svc).Conflicts(a.project)
			if err != nil {
				return err
			}
			var lines []string
			for _, x := range cs {
				lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%s\t%s", x.ID, x.Type, x.Severity, x.Status, x.Description))
			}
			if cs == nil {
				cs = []tasks.Conflict{}
			}
			return a.emit(map[string]any{"conflicts": cs}, strings.Join(lines, "\n"))
		},
	}
}

// recoveryCommand is `recovery check`: the check_recovery MCP tool on the
// CLI.
func (a *app) recoveryCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "recovery",
		Short: "Sessions that need recovery after a crash or a context compaction",
	}
	var o recovery.RecoveryOptions
	check := &cobra.Command{
		Use:   "check",
		Short: "Report sessions needing recovery with a resume prompt (MCP: check_recovery)",
		Long: `A session needs recovery when its heartbeat went stale (crash) or the
PreCompact hook recorded a recovery point (compaction). Each comes with a resume
prompt: task, phase, iteration, immediate context, the tool calls PostToolUse saw,
notes changed and not committed, the conversation summary, recommended actions.
--mark-recovered ID resumes a crashed session and clears a recovery point.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			rep, err := recovery.New(svc).CheckRecovery(o)
			if err != nil {
				return err
			}
			text := rep.Summary
			if rep.Recovered != "" {
				text = "marked " + rep.Recovered + " recovered; " + text
			}
			for _, n := range rep.Sessions {
				text += "\n\n" + svc.Runnable(a.project, n.ResumePrompt, "")
			}
			return a.emit(rep, strings.TrimRight(text, "\n"))
		},
	}
	check.Flags().StringVar(&o.MarkRecovered, "mark-recovered", "", "mark this session recovered")
	check.Flags().BoolVar(&o.IncludeHistory, "include-history", false, "include the last 10 tool calls")
	c.AddCommand(check)
	return c
}
