package tasks

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

// TestSwitchTaskInOneCommit: switching during a session saves the task
// left and loads the next in one commit that holds both notes, the global
// context and the current state: the task left gets the updates, the next
// one goes from pending to in_progress with last_session_at, and both the
// global context and the session name it as the active task. The outcome
// says what the next task waits for and the version the task left is at.
func TestSwitchTaskInOneCommit(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	newTask(t, s, NewTaskOptions{Name: "Schema"})
	newTask(t, s, NewTaskOptions{Name: "Auth"})
	newTask(t, s, NewTaskOptions{Name: "Login", DependsOn: []string{"auth"}})
	newTask(t, s, NewTaskOptions{Name: "Docs", Blocks: []string{"login"}})
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "schema", Updates: TaskUpdate{Status: strp(session.TaskCompleted)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "login", Updates: TaskUpdate{}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Start(session.StartOptions{Project: "demo", Objective: "Login flow"})
	if err != nil {
		t.Fatal(err)
	}
	sid := st.State.Session
	stateBefore := readNote(t, s, "demo/session-current-state.md")
	before := commitCount(t, s)

	now = now.Add(time.Hour)
	out, err := s.SwitchTask(SwitchOptions{Project: "demo", From: "auth", To: "login", Updates: TaskUpdate{
		Phase: strp("review"), ImmediateFields: &ImmediatePatch{LastAction: strp("wrote the token check")}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := commitCount(t, s); got != before+1 {
		t.Fatalf("%d commits after the switch, want %d", got, before+1)
	}
	files := strings.Fields(gitOut(t, s, "show", "--name-only", "--format=", "HEAD"))
	slices.Sort(files)
	if want := []string{"demo/global-context.md", "demo/session-current-state.md", "demo/tasks/auth.md", "demo/tasks/login.md"}; !slices.Equal(files, want) {
		t.Fatalf("the switch commit holds %v, want %v", files, want)
	}
	msg := lastMessage(t, s)
	for _, want := range []string{"task-switch: to login", "Session: " + sid, "Task: login", "Change-Type: manual"} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	if out.Previous == nil || *out.Previous != (SwitchedFrom{TaskID: "auth", Saved: true, Version: 2}) {
		t.Errorf("previous = %+v", out.Previous)
	}
	if out.New.ID != "login" || out.New.Status != session.TaskInProgress || !out.Timestamp.Equal(now) {
		t.Errorf("new task = %+v at %v", out.New, out.Timestamp)
	}
	var waits []string
	for _, r := range out.BlockedBy {
		waits = append(waits, r.TaskID+":"+r.Status)
	}
	if want := []string{"auth:pending", "docs:pending"}; !slices.Equal(waits, want) {
		t.Errorf("blocked by %v, want %v", waits, want)
	}
	auth := readNote(t, s, "demo/tasks/auth.md")
	for _, want := range []string{"phase: review\n", "- **Last action:** wrote the token check\n", "updated: 2026-03-02T10:00:00Z\n"} {
		if !strings.Contains(auth, want) {
			t.Errorf("the task left lacks %q:\n%s", want, auth)
		}
	}
	login := readNote(t, s, "demo/tasks/login.md")
	for _, want := range []string{"status: in_progress\n", "last_session_at: 2026-03-02T10:00:00Z\n"} {
		if !strings.Contains(login, want) {
			t.Errorf("the next task lacks %q:\n%s", want, login)
		}
	}
	link := "active_task: '[[demo/tasks/login|login]]'\n"
	if g := readNote(t, s, "demo/global-context.md"); !strings.Contains(g, link) {
		t.Errorf("global context:\n%s", g)
	}
	stateAfter := readNote(t, s, "demo/session-current-state.md")
	if !strings.Contains(stateAfter, link) || stateAfter == stateBefore {
		t.Errorf("current state:\n%s", stateAfter)
	}
	cur, err := s.Current("demo")
	if err != nil || cur.ActiveTask != "login" || cur.Version <= st.State.Version {
		t.Errorf("state after the switch = active task %q version %d (was %d), %v", cur.ActiveTask, cur.Version, st.State.Version, err)
	}
	g, err := s.Global("demo")
	if err != nil || g.ActiveTask != "login" {
		t.Errorf("global active task = %q, %v", g.ActiveTask, err)
	}

	// Switching back to a task in progress keeps its status; one whose
	// status is completed is not made in progress either.
	now = now.Add(time.Hour)
	out, err = s.SwitchTask(SwitchOptions{Project: "demo", From: "login", To: "schema"})
	if err != nil || out.New.Status != session.TaskCompleted || len(out.BlockedBy) != 0 {
		t.Fatalf("switch to a completed task = %+v, %v", out.New, err)
	}
	if task, _ := s.Task("demo", "login"); task.Status != session.TaskInProgress {
		t.Errorf("the task left is %s", task.Status)
	}
}

// TestSwitchTaskWithoutSaving: without a task to leave, or with NoSave, or
// switching to the task already loaded, only the next task, the global
// context (made when missing) and — with no session active — not the
// current state are written; the task left keeps its note.
func TestSwitchTaskWithoutSaving(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		o        SwitchOptions
		previous *SwitchedFrom
	}{
		{"only load", SwitchOptions{To: "b"}, nil},
		{"no save", SwitchOptions{From: "a", To: "b", NoSave: true, Updates: TaskUpdate{Phase: strp("ignored")}}, &SwitchedFrom{TaskID: "a", Version: 1}},
		{"to itself", SwitchOptions{From: "b", To: "b"}, &SwitchedFrom{TaskID: "b", Version: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := testService(t, nil)
			newTask(t, s, NewTaskOptions{Name: "A"})
			newTask(t, s, NewTaskOptions{Name: "B"})
			a, state := readNote(t, s, "demo/tasks/a.md"), readNote(t, s, "demo/session-current-state.md")
			c.o.Project = "demo"
			out, err := s.SwitchTask(c.o)
			if err != nil {
				t.Fatal(err)
			}
			if (out.Previous == nil) != (c.previous == nil) || out.Previous != nil && *out.Previous != *c.previous {
				t.Errorf("previous = %+v, want %+v", out.Previous, c.previous)
			}
			files := strings.Fields(gitOut(t, s, "show", "--name-only", "--format=", "HEAD"))
			slices.Sort(files)
			if want := []string{"demo/global-context.md", "demo/tasks/b.md"}; !slices.Equal(files, want) {
				t.Errorf("the switch commit holds %v, want %v", files, want)
			}
			if strings.Contains(lastMessage(t, s), "Session:") {
				t.Errorf("a switch outside a session names one:\n%s", lastMessage(t, s))
			}
			if readNote(t, s, "demo/tasks/a.md") != a || readNote(t, s, "demo/session-current-state.md") != state {
				t.Error("the task left or the current state changed")
			}
			if strings.Contains(readNote(t, s, "demo/tasks/b.md"), "ignored") {
				t.Error("the updates were applied to a task not saved")
			}
		})
	}
}

// TestSwitchTaskRefusals: a missing task to leave or to load, a task
// another holder has locked, or bad updates are refused with their codes,
// and nothing changes.
func TestSwitchTaskRefusals(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "A"})
	newTask(t, s, NewTaskOptions{Name: "B"})
	newTask(t, s, NewTaskOptions{Name: "Held"})
	if _, err := s.LockTask("demo", "held", "other-session", nil); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	for _, c := range []struct {
		what string
		o    SwitchOptions
		code errs.Code
	}{
		{"a missing target", SwitchOptions{From: "a", To: "nowhere"}, errs.TargetTaskNotFound},
		{"a target that is a path", SwitchOptions{To: "../a"}, errs.TargetTaskNotFound},
		{"a missing source", SwitchOptions{From: "nowhere", To: "b"}, errs.SourceTaskNotFound},
		{"a locked target", SwitchOptions{From: "a", To: "held"}, errs.TaskLocked},
		{"a locked source", SwitchOptions{From: "held", To: "a"}, errs.TaskLocked},
		{"a bad status for the source", SwitchOptions{From: "a", To: "b", Updates: TaskUpdate{Status: strp("finished")}}, errs.UpdateValidationFailed},
		{"a missing project", SwitchOptions{Project: "nope", To: "a"}, errs.ProjectNotFound},
	} {
		if c.o.Project == "" {
			c.o.Project = "demo"
		}
		if _, err := s.SwitchTask(c.o); !hasCode(err, c.code) {
			t.Errorf("%s: error %v, want %s", c.what, err, c.code.Name)
		}
	}
	unchanged(t, s, before)
	// The holder of the lock switches in.
	if _, err := s.SwitchTask(SwitchOptions{Project: "demo", From: "a", To: "held", Holder: "other-session"}); err != nil {
		t.Fatalf("the lock's holder: %v", err)
	}
}
