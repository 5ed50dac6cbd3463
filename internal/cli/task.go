package cli

import (
	"fmt"
	"strings"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
)

// taskCommand is `task`: task contexts on the CLI.
func (a *app) taskCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "task",
		Short: "Task contexts: one note per task in <project>/tasks/",
		Long: `A task context is a note, <project>/tasks/<task-id>.md: its status, phase,
iteration, key files and relationships are properties (wikilinks to other task
notes, so Obsidian's graph view shows them); its immediate context, key files,
technical decisions and resume prompt are sections a person can edit in
Obsidian. Every change is one commit; version N of a task is the Nth commit that
touched its note.`,
	}
	c.AddCommand(a.taskNewCommand(), a.taskListCommand(), a.taskShowCommand(), a.taskUpdateCommand(),
		a.taskSwitchCommand(), a.taskLockCommand(), a.taskUnlockCommand(), a.taskVersionsCommand(), a.taskGraphCommand())
	return c
}

func (a *app) taskNewCommand() *cobra.Command {
	var o tasks.NewTaskOptions
	c := &cobra.Command{
		Use:   "new NAME",
		Short: "Make a task note and print its id (the name's slug)",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.Name = a.project, strings.Join(argv, " ")
			out, err := tasks.New(svc).TaskNew(o)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.emit(map[string]any{"task_id": out.Task.ID, "note": out.Task.Note, "version": out.Version, "commit": out.Result.Commit}, "")
			}
			return a.emit(nil, out.Task.ID)
		},
	}
	c.Flags().StringVar(&o.ID, "id", "", "the task id (default: the name's slug)")
	c.Flags().IntVar(&o.Priority, "priority", 0, "priority (a number; higher first)")
	c.Flags().StringArrayVar(&o.KeyFiles, "key-file", nil, "a file the task works on (repeatable)")
	c.Flags().StringArrayVar(&o.DependsOn, "depends-on", nil, "a task this one needs finished first (repeatable)")
	c.Flags().StringArrayVar(&o.Blocks, "blocks", nil, "a task this one blocks (repeatable)")
	c.Flags().StringArrayVar(&o.RelatedTo, "related-to", nil, "a related task (repeatable)")
	c.Flags().StringVar(&o.Parent, "parent", "", "the parent task")
	return c
}

func (a *app) taskListCommand() *cobra.Command {
	var status string
	c := &cobra.Command{
		Use:   "list",
		Short: "List the project's tasks: id, status, phase, name",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			all, err := tasks.New(svc).Tasks(a.project)
			if err != nil {
				return err
			}
			out := []tasks.Task{}
			var lines []string
			for _, t := range all {
				if status != "" && t.Status != status {
					continue
				}
				out = append(out, t)
				lock := ""
				if t.Lock != nil {
					lock = " (locked by " + t.Lock.Holder + " until " + note.FormatTime(t.Lock.ExpiresAt) + ")"
				}
				lines = append(lines, fmt.Sprintf("%-24s %-12s %-14s %s%s", t.ID, t.Status, dash(t.Phase), t.Name, lock))
			}
			if len(lines) == 0 {
				lines = []string{"no tasks; make one with `" + svc.Command(a.project, "task new NAME") + "`"}
			}
			return a.emit(map[string]any{"tasks": out}, strings.Join(lines, "\n"))
		},
	}
	c.Flags().StringVar(&status, "status", "", "only tasks with this status")
	return c
}

func (a *app) taskShowCommand() *cobra.Command {
	var o tasks.UnifiedOptions
	c := &cobra.Command{
		Use:   "show [TASK]",
		Short: "Show a task's unified context (MCP: get_unified_context); without TASK, the global context",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			if len(argv) == 1 {
				o.TaskID = argv[0]
			}
			uc, err := tasks.New(svc).UnifiedContext(o)
			if err != nil {
				return err
			}
			return a.emit(uc, formatUnified(uc))
		},
	}
	c.Flags().BoolVar(&o.IncludeVersionHistory, "versions", false, "include the task's version history")
	c.Flags().IntVar(&o.MaxVersions, "max-versions", 5, "how many versions, newest")
	c.Flags().BoolVar(&o.NoRelationships, "no-relationships", false, "leave out the relationships")
	return c
}

func formatUnified(uc tasks.UnifiedContext) string {
	var b strings.Builder
	g := uc.Global
	fmt.Fprintf(&b, "project %s", uc.ProjectID)
	if g.ActiveTask != "" {
		fmt.Fprintf(&b, " (active task %s)", g.ActiveTask)
	}
	b.WriteString("\n")
	for _, r := range g.HardRules {
		fmt.Fprintf(&b, "rule: %s\n", r)
	}
	if t := uc.Task; t != nil {
		fmt.Fprintf(&b, "\ntask %s: %s\nstatus %s · phase %s · iteration %d · priority %d\n", t.ID, t.Name, t.Status, dash(t.Phase), t.Iteration, t.Priority)
		ic := t.Immediate
		fmt.Fprintf(&b, "working on: %s\nlast action: %s\nnext step: %s\n", dash(ic.WorkingOn), dash(ic.LastAction), dash(ic.NextStep))
		if len(ic.Blockers) > 0 {
			fmt.Fprintf(&b, "blockers: %s\n", strings.Join(ic.Blockers, "; "))
		}
		if len(t.KeyFiles) > 0 {
			fmt.Fprintf(&b, "key files: %s\n", strings.Join(t.KeyFiles, ", "))
		}
		if t.Lock != nil {
			fmt.Fprintf(&b, "locked by %s until %s\n", t.Lock.Holder, note.FormatTime(t.Lock.ExpiresAt))
		}
		if r := uc.Relationships; r != nil {
			for _, rel := range []struct {
				name string
				refs []tasks.TaskRef
			}{{"depends on", r.DependsOn}, {"blocked by", r.BlockedBy}, {"blocks", r.Blocks}, {"related to", r.RelatedTo}} {
				if len(rel.refs) > 0 {
					var ids []string
					for _, x := range rel.refs {
						ids = append(ids, x.TaskID+" ("+x.Status+")")
					}
					fmt.Fprintf(&b, "%s: %s\n", rel.name, strings.Join(ids, ", "))
				}
			}
		}
		for _, v := range uc.VersionHistory {
			fmt.Fprintf(&b, "v%d %s %s %s\n", v.Version, note.FormatTime(v.CreatedAt), v.ChangeType, v.ChangeSummary)
		}
		for _, c := range uc.Conflicts {
			fmt.Fprintf(&b, "conflict %s: %s (%s)\n", c.ID, c.Description, c.Severity)
		}
		if t.ResumePrompt != "" {
			fmt.Fprintf(&b, "\n%s\n", t.ResumePrompt)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// taskUpdateFlags are the flags that make a TaskUpdate.
type taskUpdateFlags struct {
	name, phase, status, resume, workingOn, lastAction, nextStep, notes string
	iteration, priority                                                 int
	score                                                               float64
	blockers, keyFiles, decisions                                       []string
}

func (f *taskUpdateFlags) add(c *cobra.Command, all bool) {
	c.Flags().StringVar(&f.workingOn, "working-on", "", "immediate context: what the task is working on")
	c.Flags().StringVar(&f.lastAction, "last-action", "", "immediate context: the last action taken")
	c.Flags().StringVar(&f.nextStep, "next-step", "", "immediate context: the next step")
	c.Flags().StringArrayVar(&f.blockers, "blocker", nil, "immediate context: a blocker (repeatable; --blocker '' clears them)")
	c.Flags().StringVar(&f.notes, "notes", "", "immediate context: notes")
	c.Flags().StringVar(&f.phase, "phase", "", "the task's current phase")
	c.Flags().IntVar(&f.iteration, "iteration", 0, "the task's iteration")
	if !all {
		return
	}
	c.Flags().StringVar(&f.name, "name", "", "the task's name")
	c.Flags().StringVar(&f.status, "status", "", strings.Join(session.TaskStatuses, ", "))
	c.Flags().IntVar(&f.priority, "priority", 0, "priority")
	c.Flags().Float64Var(&f.score, "score", 0, "score")
	c.Flags().StringArrayVar(&f.keyFiles, "key-file", nil, "the task's key files (repeatable; replaces the list)")
	c.Flags().StringArrayVar(&f.decisions, "decision", nil, "a technical decision, e.g. a link to a decision note (repeatable; replaces the list)")
	c.Flags().StringVar(&f.resume, "resume-prompt", "", "the task's resume prompt")
}

// update builds the TaskUpdate the flags set on c; the immediate context
// flags change only the fields given, merged with the note's others inside
// the operation.
func (f *taskUpdateFlags) update(c *cobra.Command) tasks.TaskUpdate {
	var u tasks.TaskUpdate
	ch := c.Flags().Changed
	if ch("name") {
		u.Name = &f.name
	}
	if ch("phase") {
		u.Phase = &f.phase
	}
	if ch("status") {
		u.Status = &f.status
	}
	if ch("iteration") {
		u.Iteration = &f.iteration
	}
	if ch("priority") {
		u.Priority = &f.priority
	}
	if ch("score") {
		u.Score = &f.score
	}
	if ch("resume-prompt") {
		u.ResumePrompt = &f.resume
	}
	if ch("key-file") {
		u.KeyFiles, u.SetKeyFiles = nonEmptyItems(f.keyFiles), true
	}
	if ch("decision") {
		u.TechnicalDecisions, u.SetDecisions = nonEmptyItems(f.decisions), true
	}
	if ch("working-on") || ch("last-action") || ch("next-step") || ch("blocker") || ch("notes") {
		var p tasks.ImmediatePatch
		for flag, dst := range map[string]struct {
			v   string
			dst **string
		}{"working-on": {f.workingOn, &p.WorkingOn}, "last-action": {f.lastAction, &p.LastAction}, "next-step": {f.nextStep, &p.NextStep}, "notes": {f.notes, &p.Notes}} {
			if ch(flag) {
				v := dst.v
				*dst.dst = &v
			}
		}
		if ch("blocker") {
			b := nonEmptyItems(f.blockers)
			p.Blockers = &b
		}
		u.ImmediateFields = &p
	}
	return u
}

func nonEmptyItems(v []string) []string {
	var out []string
	for _, x := range v {
		if strings.TrimSpace(x) != "" {
			out = append(out, x)
		}
	}
	return out
}

func (a *app) taskUpdateCommand() *cobra.Command {
	var f taskUpdateFlags
	var summary, changeType string
	c := &cobra.Command{
		Use:   "update TASK",
		Short: "Save a task's context (MCP: save_context_snapshot): only the fields given change",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := tasks.New(svc).SaveTask(tasks.SaveTaskOptions{Project: a.project, TaskID: argv[0], Updates: f.update(c), ChangeSummary: summary, ChangeType: changeType})
			if err != nil {
				return err
			}
			return a.emit(out, fmt.Sprintf("%s version %d", out.Task.ID, out.Version))
		},
	}
	f.add(c, true)
	c.Flags().StringVar(&summary, "summary", "", "what changed (the commit's summary)")
	c.Flags().StringVar(&changeType, "change-type", "manual", strings.Join(tasks.ChangeTypes, ", "))
	return c
}

func (a *app) taskSwitchCommand() *cobra.Command {
	var f taskUpdateFlags
	var from string
	var noSave bool
	c := &cobra.Command{
		Use:   "switch TASK",
		Short: "Switch to TASK in one commit (MCP: switch_task): --from's context saved, TASK loaded",
		Long: `Saves the context of the task switched from (--from, with the immediate context
flags) and loads TASK: it becomes in_progress (from pending) and the project's and
the active session's active task, all in one commit. Prints TASK's context.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o := tasks.SwitchOptions{Project: a.project, From: from, To: argv[0], NoSave: noSave}
			if from != "" {
				o.Updates = f.update(c)
			}
			out, err := tasks.New(svc).SwitchTask(o)
			if err != nil {
				return err
			}
			text := "switched to " + out.New.ID
			if len(out.BlockedBy) > 0 {
				var ids []string
				for _, r := range out.BlockedBy {
					ids = append(ids, r.TaskID+" ("+r.Status+")")
				}
				text += "; it waits for " + strings.Join(ids, ", ")
			}
			return a.emit(out, text)
		},
	}
	f.add(c, false)
	c.Flags().StringVar(&from, "from", "", "the task switched from (its context is saved)")
	c.Flags().BoolVar(&noSave, "no-save", false, "do not save --from's context")
	return c
}

func (a *app) taskLockCommand() *cobra.Command {
	var elements []string
	var holder string
	c := &cobra.Command{
		Use:     "lock TASK",
		Aliases: []string{"claim"},
		Short:   "Take (or renew) a task's lock; with a git remote, claim it there first; --element locks an element of it",
		Long: `A locked task refuses saves, switches and rollbacks by anyone but its holder
(E1613 TASK_LOCKED, naming the holder and expiry) until the lock expires or is
released with ` + "`sessionvault task unlock TASK`" + `. The holder is the active session, else
this machine. Locked elements (--element) stay locked until unlocked.

Without a git remote, the lock holds for 5 minutes. On a vault shared
through a git remote, the lock is a claim on the remote (the ref
refs/sessionvault/claims/<project>/<task>), taken by a push only one machine
can win: another machine's claim refuses the lock with E1613 naming the
holder, the machine and when the claim ends. A claim holds for claim_lease
in the config (30m by default); running this command again, ` + "`remote sync`" + ` and
` + "`heartbeat`" + ` renew it. When the remote cannot be reached, the lock is recorded
here as provisional, and the next ` + "`sessionvault remote sync`" + ` claims it on the
remote or, when another machine claimed it first, removes it and says so.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := tasks.New(svc).LockTask(a.project, argv[0], holder, elements)
			if err != nil {
				return err
			}
			text := fmt.Sprintf("%s locked by %s until %s", out.Task.ID, out.Task.Lock.Holder, note.FormatTime(out.Task.Lock.ExpiresAt))
			if out.Claim != nil {
				text += "\n" + tasks.ClaimText(*out.Claim)
			}
			return a.emit(out, text)
		},
	}
	c.Flags().StringArrayVar(&elements, "element", nil, "an element to lock, e.g. schema.sql (repeatable)")
	c.Flags().StringVar(&holder, "holder", "", "who holds the lock (default: the active session, else this machine)")
	return c
}

func (a *app) taskUnlockCommand() *cobra.Command {
	var elements []string
	var holder string
	var force bool
	c := &cobra.Command{
		Use:   "unlock TASK",
		Short: "Release a task's lock (or, with --element, unlock elements)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := tasks.New(svc).UnlockTask(a.project, argv[0], holder, elements, force)
			if err != nil {
				return err
			}
			text := out.Task.ID + " unlocked"
			if out.Claim != nil {
				text += "\n" + tasks.ClaimText(*out.Claim)
			}
			return a.emit(out, text)
		},
	}
	c.Flags().StringArrayVar(&elements, "element", nil, "an element to unlock (repeatable)")
	c.Flags().StringVar(&holder, "holder", "", "who holds the lock (default: the active session, else this machine)")
	c.Flags().BoolVar(&force, "force", false, "release another holder's lock")
	return c
}

func (a *app) taskVersionsCommand() *cobra.Command {
	var max int
	c := &cobra.Command{
		Use:   "versions TASK",
		Short: "List a task's versions: the commits that touched its note, oldest first",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			vs, err := tasks.New(svc).TaskVersions(a.project, argv[0], max)
			if err != nil {
				return err
			}
			var lines []string
			for _, v := range vs {
				lines = append(lines, fmt.Sprintf("%d\t%s\t%s\t%s\t%s", v.Version, note.FormatTime(v.CreatedAt), v.Commit[:12], v.ChangeType, v.ChangeSummary))
			}
			return a.emit(map[string]any{"task_id": argv[0], "versions": vs}, strings.Join(lines, "\n"))
		},
	}
	c.Flags().IntVar(&max, "max", 0, "only the newest N versions (0: all)")
	return c
}

func (a *app) taskGraphCommand() *cobra.Command {
	var o tasks.GraphOptions
	c := &cobra.Command{
		Use:   "graph",
		Short: "The task graph (MCP: get_task_graph): tasks, typed edges, ready and blocked tasks",
		Long: `Edges come from the task notes' wikilinks (blocks, depends_on, related_to,
parent); inverse relations are derived. A task is ready when every task it depends
on or is blocked by is completed. A cycle is an error naming it (E1618).`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			g, err := tasks.New(svc).TaskGraphOf(o)
			if err != nil {
				return err
			}
			return a.emit(g, formatGraph(g))
		},
	}
	c.Flags().StringVar(&o.TaskID, "task", "", "focus on this task and its neighbours")
	c.Flags().IntVar(&o.Depth, "depth", 2, "with --task: how many links away")
	c.Flags().BoolVar(&o.IncludeCompleted, "include-completed", false, "show completed and archived tasks too")
	return c
}

func formatGraph(g tasks.TaskGraph) string {
	var b strings.Builder
	s := g.Summary
	fmt.Fprintf(&b, "%d tasks: %d in progress, %d pending, %d blocked, %d completed\n", s.TotalTasks, s.InProgress, s.Pending, s.Blocked, s.Completed)
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "  %-24s %-12s %s\n", n.TaskID, n.Status, n.Name)
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "  %s --%s--> %s\n", e.From, e.Type, e.To)
	}
	ids := func(ids []string) string {
		if len(ids) == 0 {
			return "none"
		}
		return strings.Join(ids, ", ")
	}
	fmt.Fprintf(&b, "ready: %s\nblocked: %s", ids(g.ReadyTasks), ids(g.BlockedTasks))
	return b.String()
}
