package recovery

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/tasks"
	"github.com/sessionvault/sessionvault/internal/workflow"
)

func strp(s string) *string { return &s }

// wantCode fails unless err carries code.
func wantCode(tb testing.TB, err error, code errs.Code) {
	tb.Helper()
	if !errs.Is(err, code) {
		tb.Fatalf("error %v (code %s), want %s", err, errs.CodeOf(err).Name, code.Name)
	}
}

// TestNoRecoveryForIdleOrHealthySession: a project with no session, a
// session that keeps showing signs of life, and one that ended need no
// recovery; the report says so and lists no session.
func TestNoRecoveryForIdleOrHealthySession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	none := func(when string) {
		t.Helper()
		rep := f.check(t, RecoveryOptions{Project: "demo", IncludeHistory: true})
		if rep.NeedsRecovery || len(rep.Sessions) != 0 || rep.Sessions == nil || rep.Summary != "no session needs recovery" || rep.Recovered != "" {
			t.Fatalf("%s: report %+v, want no session needing recovery (and an empty, non-nil list)", when, rep)
		}
		if !rep.Timestamp.Equal(*f.now) {
			t.Fatalf("%s: report time %s, want the clock's %s", when, rep.Timestamp, *f.now)
		}
	}
	none("idle project")
	// The default project is the one checked when none is named.
	if rep := f.check(t, RecoveryOptions{}); rep.NeedsRecovery {
		t.Fatalf("default project: %+v", rep)
	}

	f.startSession(t, "Healthy work")
	if err := f.RecordToolUse("demo", "Read", true); err != nil {
		t.Fatal(err)
	}
	// Heartbeats every 20 minutes keep it alive for an hour.
	for i := 0; i < 3; i++ {
		f.advance(20 * time.Minute)
		if _, err := f.Heartbeat("demo"); err != nil {
			t.Fatal(err)
		}
		none(fmt.Sprintf("after heartbeat %d", i+1))
	}
	if _, err := f.End("demo", "done", nil); err != nil {
		t.Fatal(err)
	}
	f.advance(3 * time.Hour)
	none("ended session, hours later")
}

// TestCheckRecoveryUnknownProject: a project the vault does not have is
// refused with its code.
func TestCheckRecoveryUnknownProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.CheckRecovery(RecoveryOptions{Project: "nosuch"})
	wantCode(t, err, errs.ProjectNotFound)
	wantCode(t, f.RecordRecoveryPoint("nosuch", "auto", ""), errs.ProjectNotFound)
}

// TestCrashedSessionResumePrompt: a session whose heartbeat went stale is
// reported as crashed, and its resume prompt gives the agent what it needs
// to carry on: the active task and its immediate context, the workflow's
// active agent, the recent tool calls (failures marked), the files not yet
// committed, the latest updates, and what to do first (resume, reload the
// task, review the changes, the open blocker). Marking it recovered resumes
// the session.
func TestCrashedSessionResumePrompt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.startSession(t, "Ship the parser")
	progress := 40
	f.advance(time.Minute)
	if _, err := f.Update(session.UpdateOptions{Project: "demo", Message: "Parsed the headers", Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	ts := tasks.New(f.Service.Service)
	task, err := ts.TaskNew(tasks.NewTaskOptions{Project: "demo", Name: "Parser rewrite"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.SwitchTask(tasks.SwitchOptions{Project: "demo", To: task.Task.ID}); err != nil {
		t.Fatal(err)
	}
	iter := 2
	if _, err := ts.SaveTask(tasks.SaveTaskOptions{Project: "demo", TaskID: task.Task.ID, Updates: tasks.TaskUpdate{
		Phase: strp("implementation"), Iteration: &iter,
		Immediate: &tasks.ImmediateContext{WorkingOn: "the tokenizer", LastAction: "wrote the lexer", NextStep: "run the tests", Blockers: []string{"CI is red"}},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := workflow.New(f.Service.Service).AgentStart(workflow.AgentStartOptions{Project: "demo", Agent: "implementer", Prompt: "implement the lexer"}); err != nil {
		t.Fatal(err)
	}
	f.advance(time.Minute)
	if _, err := f.Block("demo", "Waiting on review", "high"); err != nil {
		t.Fatal(err)
	}
	lastSign := *f.now
	for i := 1; i <= 12; i++ {
		f.advance(time.Second)
		if err := f.RecordToolUse("demo", fmt.Sprintf("Tool%02d", i), i != 11); err != nil {
			t.Fatal(err)
		}
		if i == 6 {
			// A line cut short (a hook killed mid-write) is skipped.
			if err := f.AppendState(toolHistoryFile("demo"), "{\"timestamp\":\"2026-11\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.write(t, "demo/scratch.md", "a person's scratch note\n")

	// 29 minutes of silence: still alive.
	f.advance(29 * time.Minute)
	if rep := f.check(t, RecoveryOptions{Project: "demo"}); rep.NeedsRecovery {
		t.Fatalf("alive session reported: %+v", rep)
	}
	// Past the 30 minute heartbeat timeout: crashed.
	f.advance(2 * time.Minute)
	rep := f.check(t, RecoveryOptions{Project: "demo", IncludeHistory: true})
	if !rep.NeedsRecovery || len(rep.Sessions) != 1 {
		t.Fatalf("report %+v, want one session needing recovery", rep)
	}
	if want := "1 session(s) need recovery: " + id + " (crash)"; rep.Summary != want {
		t.Fatalf("summary %q, want %q", rep.Summary, want)
	}
	n := rep.Sessions[0]
	if n.SessionID != id || n.RecoveryType != "crash" || n.TaskID != "parser-rewrite" || n.TaskName != "Parser rewrite" {
		t.Fatalf("need %+v", n)
	}
	if !n.LastActivity.Equal(lastSign) {
		t.Fatalf("last activity %s, want the last entry's %s", n.LastActivity, lastSign)
	}
	if len(n.ToolHistory) != 10 || n.ToolHistory[0].Tool != "Tool03" || n.ToolHistory[9].Tool != "Tool12" || n.ToolHistory[8].Success {
		t.Fatalf("tool history %+v, want Tool03..Tool12 with Tool11 failed", n.ToolHistory)
	}
	if len(n.UnsavedChanges) != 1 || n.UnsavedChanges[0] != (PendingChange{Type: "added", Path: "demo/scratch.md", Description: "added and not committed"}) {
		t.Fatalf("unsaved changes %+v", n.UnsavedChanges)
	}
	p := n.ResumePrompt
	mustContain(t, "resume prompt", p,
		"## Recovery Required: crash\n\n",
		"### Task: Parser rewrite\n- **Phase**: implementation\n- **Iteration**: 2\n",
		"### Immediate Context\n- **Working On**: the tokenizer\n- **Last Action**: wrote the lexer\n- **Next Step**: run the tests\n- **Blockers**: CI is red\n",
		"### Orchestrator Workflow\n", "- Active agent: implementer (a-1", ": implement the lexer",
		"### Recent Tool Usage\n",
		"- 2026-11-23T09:02:08Z Tool08 (ok)\n",
		"- 2026-11-23T09:02:11Z Tool11 (failed)\n",
		"- 2026-11-23T09:02:12Z Tool12 (ok)\n",
		"### Pending Changes\n- added: demo/scratch.md\n",
		"### Conversation Summary\n", "- Parsed the headers\n",
		"### Recommended Actions\n",
		"1. Resume the session: `", "recovery check --mark-recovered "+id+"`\n",
		"2. Reload the task: `", "task show parser-rewrite`\n",
		"3. Review the pending changes (`git -C ", " status`); the next operation commits them\n",
		"4. Deal with 1 open blocker(s) first\n")
	mustNotContain(t, "resume prompt", p, "Tool07 ", "Memory bank", "**Objective**")

	// Without IncludeHistory the tool calls are in the prompt only.
	if rep := f.check(t, RecoveryOptions{Project: "demo"}); rep.Sessions[0].ToolHistory != nil {
		t.Fatalf("tool history without IncludeHistory: %+v", rep.Sessions[0].ToolHistory)
	}

	// Marking it recovered resumes the session (one commit, which takes the
	// pending note too); nothing needs recovery then.
	head := f.head(t)
	rep = f.check(t, RecoveryOptions{Project: "demo", MarkRecovered: id})
	if rep.Recovered != id || rep.NeedsRecovery || len(rep.Sessions) != 0 {
		t.Fatalf("after marking recovered: %+v", rep)
	}
	if f.head(t) == head {
		t.Fatal("marking a crash recovered made no commit")
	}
	st, err := f.Status("demo")
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != session.StatusActive || st.Updates[len(st.Updates)-1].Message != "Recovered after a crash; last sign of life 2026-11-23T09:02:00Z." {
		t.Fatalf("after recovery: status %s, updates %+v", st.Status, st.Updates)
	}
}

// TestCrashMarkedWithoutTask: a session marked crashed in its note (as serve
// marks it) with no task, no tool call and no pending change gets a prompt
// built from the session itself: its objective and progress, "none" for the
// rest, and the one action of resuming it.
func TestCrashMarkedWithoutTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.startSession(t, "Quick fix")
	f.advance(time.Hour)
	if marked, err := f.MarkCrashed("demo"); err != nil || marked != id {
		t.Fatalf("MarkCrashed = %q, %v", marked, err)
	}
	rep := f.check(t, RecoveryOptions{Project: "demo", IncludeHistory: true})
	if len(rep.Sessions) != 1 {
		t.Fatalf("report %+v", rep)
	}
	n := rep.Sessions[0]
	if n.RecoveryType != "crash" || n.TaskID != "" || n.TaskName != "" || len(n.ToolHistory) != 0 || n.UnsavedChanges == nil || len(n.UnsavedChanges) != 0 {
		t.Fatalf("need %+v", n)
	}
	if !n.LastActivity.Equal(start) {
		t.Fatalf("last activity %s, want the start %s", n.LastActivity, start)
	}
	mustContain(t, "resume prompt", n.ResumePrompt,
		"## Recovery Required: crash\n\n### Task: —\n- **Objective**: Quick fix\n- **Progress**: 0%\n\n",
		"### Recent Tool Usage\n- none recorded\n",
		"### Pending Changes\n- none\n",
		"### Conversation Summary\n- Quick fix\n",
		"### Recommended Actions\n1. Resume the session: ")
	mustNotContain(t, "resume prompt", n.ResumePrompt, "Orchestrator Workflow", "2. ", "Immediate Context")
	// The JSON a hook prints names the lists even when empty.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "report JSON", string(b), `"needs_recovery":true`, `"recovery_type":"crash"`, `"unsaved_changes":[]`)
	mustNotContain(t, "report JSON", string(b), `"task_id"`, `"tool_history"`)
}

// TestMarkRecoveredRefusesSessionNotNeedingIt: marking a session that needs
// no recovery (an unknown id, or a healthy session) is refused with
// RECOVERY_SESSION_NOT_FOUND, and nothing changes: no commit, the crashed
// session stays crashed.
func TestMarkRecoveredRefusesSessionNotNeedingIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.startSession(t, "Healthy")
	_, err := f.CheckRecovery(RecoveryOptions{Project: "demo", MarkRecovered: id})
	wantCode(t, err, errs.RecoverySessionNotFound)

	f.advance(time.Hour)
	head := f.head(t)
	_, err = f.CheckRecovery(RecoveryOptions{Project: "demo", MarkRecovered: "2026-11-23-session-09"})
	wantCode(t, err, errs.RecoverySessionNotFound)
	if !strings.Contains(err.Error(), `"2026-11-23-session-09" does not need recovery in project demo`) || !strings.Contains(err.Error(), "recovery check") {
		t.Fatalf("message %q", err)
	}
	if f.head(t) != head {
		t.Fatal("a refused mark made a commit")
	}
	if rep := f.check(t, RecoveryOptions{Project: "demo"}); len(rep.Sessions) != 1 || rep.Sessions[0].SessionID != id {
		t.Fatalf("after the refusal: %+v", rep)
	}
}

// TestCompactionRecovery: the recovery point PreCompact records (no commit)
// makes the active session need recovery of type compaction, with the
// compaction's instructions and the latest updates in its prompt and the
// advice to re-read the session; marking it recovered clears the point
// without a commit and leaves the session active.
func TestCompactionRecovery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.startSession(t, "Long session")
	for _, m := range []string{"First step", "Second step", "Third step", "Fourth step"} {
		f.advance(time.Minute)
		if _, err := f.Update(session.UpdateOptions{Project: "demo", Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	head := f.head(t)
	f.advance(time.Minute)
	if err := f.RecordRecoveryPoint("demo", "manual", "Keep the parser notes\nand the tests"); err != nil {
		t.Fatal(err)
	}
	if f.head(t) != head {
		t.Fatal("recording a recovery point made a commit")
	}
	rep := f.check(t, RecoveryOptions{Project: "demo"})
	if len(rep.Sessions) != 1 || rep.Sessions[0].RecoveryType != "compaction" || rep.Sessions[0].SessionID != id {
		t.Fatalf("report %+v", rep)
	}
	if want := "1 session(s) need recovery: " + id + " (compaction)"; rep.Summary != want {
		t.Fatalf("summary %q, want %q", rep.Summary, want)
	}
	mustContain(t, "resume prompt", rep.Sessions[0].ResumePrompt,
		"## Recovery Required: compaction\n",
		"### Conversation Summary\nKeep the parser notes and the tests\n- Second step\n- Third step\n- Fourth step\n",
		"### Recommended Actions\n1. Re-read the session: `", "status`; then `", "recovery check --mark-recovered "+id+"`\n")
	mustNotContain(t, "resume prompt", rep.Sessions[0].ResumePrompt, "First step", "2. ")

	rep = f.check(t, RecoveryOptions{Project: "demo", MarkRecovered: id})
	if rep.Recovered != id || rep.NeedsRecovery {
		t.Fatalf("after marking recovered: %+v", rep)
	}
	if f.head(t) != head {
		t.Fatal("marking a compaction recovered made a commit")
	}
	if rep := f.check(t, RecoveryOptions{Project: "demo"}); rep.NeedsRecovery {
		t.Fatalf("the recovery point was not cleared: %+v", rep)
	}
	st, err := f.Status("demo")
	if err != nil || st.Status != session.StatusActive {
		t.Fatalf("status %s, %v", st.Status, err)
	}
}

// TestRecoveryPointOfAnotherSession: a recovery point is the session's it
// was recorded in: none is recorded when no session is active, and one left
// by an ended session does not make the next session need recovery.
func TestRecoveryPointOfAnotherSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := f.RecordRecoveryPoint("demo", "auto", ""); err != nil {
		t.Fatal(err)
	}
	if rep := f.check(t, RecoveryOptions{Project: "demo"}); rep.NeedsRecovery {
		t.Fatalf("idle project: %+v", rep)
	}
	f.startSession(t, "First")
	if err := f.RecordRecoveryPoint("demo", "auto", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.End("demo", "done", nil); err != nil {
		t.Fatal(err)
	}
	if rep := f.check(t, RecoveryOptions{Project: "demo"}); rep.NeedsRecovery {
		t.Fatalf("ended session's recovery point: %+v", rep)
	}
	f.advance(time.Minute)
	f.startSession(t, "Second")
	if rep := f.check(t, RecoveryOptions{Project: "demo"}); rep.NeedsRecovery {
		t.Fatalf("the previous session's recovery point counted for the next: %+v", rep)
	}
}

// TestCrashWinsOverCompaction: a session that crashed after a compaction is
// reported once, as a crash; marking it recovered resumes it and clears the
// recovery point too, so nothing needs recovery afterwards. A recovery
// point can be recorded for a crashed session.
func TestCrashWinsOverCompaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.startSession(t, "Compacted then crashed")
	if err := f.RecordRecoveryPoint("demo", "auto", ""); err != nil {
		t.Fatal(err)
	}
	f.advance(time.Hour)
	if err := f.RecordRecoveryPoint("demo", "auto", "after the crash"); err != nil {
		t.Fatal(err)
	}
	rep := f.check(t, RecoveryOptions{Project: "demo"})
	if len(rep.Sessions) != 1 || rep.Sessions[0].RecoveryType != "crash" {
		t.Fatalf("report %+v", rep)
	}
	mustContain(t, "resume prompt", rep.Sessions[0].ResumePrompt, "### Conversation Summary\nafter the crash\n")
	rep = f.check(t, RecoveryOptions{Project: "demo", MarkRecovered: id})
	if rep.Recovered != id || rep.NeedsRecovery {
		t.Fatalf("after marking recovered: %+v", rep)
	}
}

// TestRecoveryPointFormats: a recovery point in the first, plain-text form
// ("<session> <trigger> <time>") still counts; an empty or unreadable one
// does not.
func TestRecoveryPointFormats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := f.startSession(t, "Old hook")
	for _, c := range []struct {
		content string
		want    bool
	}{
		{id + " auto 2026-11-23T09:00:00Z\n", true},
		{"", false},
		{"  \n", false},
		{"garbage only\n", false},
		{"2026-01-01-session-01 auto 2026-11-23T09:00:00Z\n", false},
	} {
		if err := f.V.WriteState(recoveryPointFile("demo"), []byte(c.content)); err != nil {
			t.Fatal(err)
		}
		rep := f.check(t, RecoveryOptions{Project: "demo"})
		if rep.NeedsRecovery != c.want || c.want && rep.Sessions[0].RecoveryType != "compaction" {
			t.Fatalf("recovery point %q: report %+v, want needs recovery %v", c.content, rep, c.want)
		}
	}
}

// TestToolHistoryCapped: the tool history grows by one call per tool use
// and, past its size limit, is cut back to its newest 50 calls, so the file
// the PostToolUse hook appends to stays bounded however long the session.
func TestToolHistoryCapped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	prev, cuts := 0, 0
	for i := 0; i < 1000; i++ {
		tool := fmt.Sprintf("Tool%04d", i)
		if err := f.RecordToolUse("demo", tool, i%7 != 0); err != nil {
			t.Fatal(err)
		}
		data, err := f.V.ReadState(toolHistoryFile("demo"))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > guard.MaxToolHistoryBytes+100 {
			t.Fatalf("after %d calls the history holds %d bytes", i+1, len(data))
		}
		h := f.toolHistory("demo")
		if h[len(h)-1].Tool != tool || h[len(h)-1].Success != (i%7 != 0) {
			t.Fatalf("after %s the newest call is %+v", tool, h[len(h)-1])
		}
		switch len(h) {
		case prev + 1:
		case maxToolHistory:
			cuts++
			if h[0].Tool != fmt.Sprintf("Tool%04d", i-49) {
				t.Fatalf("cut back to %s.., want the newest 50 calls", h[0].Tool)
			}
		default:
			t.Fatalf("after %d calls the history went from %d to %d calls", i+1, prev, len(h))
		}
		prev = len(h)
	}
	if cuts == 0 {
		t.Fatal("1000 calls never cut the history back")
	}
}
