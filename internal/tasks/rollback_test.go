package tasks

import (
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

// noRewrite fails the test unless HEAD is one commit on top of was (the
// history before it kept as it was).
func noRewrite(tb testing.TB, s *Service, was string) {
	tb.Helper()
	if parent := gitOut(tb, s, "rev-parse", "HEAD^"); parent != was {
		tb.Fatalf("HEAD's parent is %s, want the old HEAD %s", parent, was)
	}
}

// TestRollbackToVersion: rolling a task back to a version writes that
// version's note byte for byte as one new commit on top of the history,
// whose trailers say what it restored, after listing a backup checkpoint
// of the state before, tagged on the commit before; rolling forward to the
// backup brings the newest content back.
func TestRollbackToVersion(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	id := newTask(t, s, NewTaskOptions{Name: "Parser"})
	rel := session.TaskPath("demo", id)
	for i, phase := range []string{"design", "build", "review"} {
		now = now.Add(time.Hour)
		if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Phase: strp(phase), Iteration: intp(i + 1)}}); err != nil {
			t.Fatal(err)
		}
	}
	v2 := gitOut(t, s, "show", gitOut(t, s, "rev-list", "--skip=2", "-1", "HEAD")+":"+rel)
	newest := readNote(t, s, rel)
	was := head(t, s)
	n := commitCount(t, s)

	now = now.Add(time.Hour)
	out, err := s.Rollback(RollbackOptions{Project: "demo", TaskID: id, Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := readNote(t, s, rel); strings.TrimRight(got, "\n") != v2 {
		t.Fatalf("the note after the rollback:\n%s\nwant version 2:\n%s", got, v2)
	}
	if commitCount(t, s) != n+1 {
		t.Fatalf("%d commits, want %d", commitCount(t, s), n+1)
	}
	noRewrite(t, s, was)
	if out.RolledBackTo != (RollbackPoint{Type: "version", Identifier: 2}) || out.TaskID != id || len(out.Restored) != 1 || out.Restored[0] != rel ||
		out.RestoredState == nil || *out.RestoredState != (TaskState{CurrentPhase: "design", Iteration: 1, Status: session.TaskPending}) || !out.Timestamp.Equal(now) {
		t.Fatalf("outcome = %+v (restored state %+v)", out, out.RestoredState)
	}
	msg := lastMessage(t, s)
	for _, want := range []string{"rollback: " + rel + " to version 2", "Change-Type: recovery", "Rollback-To: 2", "Task: parser", "Backup-Checkpoint: " + out.BackupCheckpointID} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	if out.BackupCheckpointID == "" {
		t.Fatal("no backup checkpoint")
	}
	if at := gitOut(t, s, "rev-parse", "checkpoint/"+out.BackupCheckpointID+"^{commit}"); at != was {
		t.Errorf("the backup names %s, want the commit before the rollback %s", at, was)
	}
	if list := readNote(t, s, "demo/checkpoints.md"); !strings.Contains(list, "`"+out.BackupCheckpointID+"` · **before rollback to version 2** · auto · task [[demo/tasks/parser|parser]] ^") {
		t.Errorf("checkpoints.md:\n%s", list)
	}
	files := gitOut(t, s, "show", "--name-only", "--format=", "HEAD")
	if files != "demo/checkpoints.md\n"+rel && files != rel+"\ndemo/checkpoints.md" {
		t.Errorf("the rollback commit holds %q", files)
	}

	// Forward to the backup, without another backup: the newest content.
	tags := gitOut(t, s, "tag", "-l")
	out, err = s.Rollback(RollbackOptions{Project: "demo", TaskID: id, Checkpoint: out.BackupCheckpointID, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := readNote(t, s, rel); got != newest {
		t.Fatalf("rolled forward:\n%s\nwant:\n%s", got, newest)
	}
	if out.BackupCheckpointID != "" || gitOut(t, s, "tag", "-l") != tags || strings.Contains(lastMessage(t, s), "Backup-Checkpoint") {
		t.Errorf("NoBackup made a backup: %+v", out)
	}
	if out.RestoredState == nil || out.RestoredState.CurrentPhase != "review" {
		t.Errorf("restored state = %+v", out.RestoredState)
	}
}

// TestRollbackKeepsThePersonsPart: a rollback restores the engine's part
// of a task note as the checkpoint holds it and keeps the person's part as
// it is now — their sections (added or changed since) and properties
// (scalar, list, null) — committing their edit first; a section or a
// property of theirs the note no longer has is not brought back.
func TestRollbackKeepsThePersonsPart(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	id := newTask(t, s, NewTaskOptions{Name: "Auth", KeyFiles: []string{"auth.go"}})
	rel := session.TaskPath("demo", id)
	editNote(t, s, rel, "## Resume prompt\n", "## Old notes\n\nGone by now.\n\n## Shared\n\nv1\n\n## Resume prompt\n")
	editNote(t, s, rel, "tags:\n", "stale: yes\ntags:\n")
	gitOut(t, s, "commit", "-q", "-m", "by hand", "--", rel)
	cp, err := s.CreateCheckpoint(CheckpointOptions{Project: "demo", Label: "design done", Tasks: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	atCheckpoint := readNote(t, s, rel)
	if !strings.Contains(gitOut(t, s, "show", cp.Checkpoint.Commit+":"+rel), "## Old notes") {
		t.Fatal("the checkpoint does not hold the person's old section")
	}

	now = now.Add(time.Hour)
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Phase: strp("implementation"), Status: strp(session.TaskBlocked),
		ImmediateFields: &ImmediatePatch{Blockers: &[]string{"no staging"}}, KeyFiles: []string{"auth.go", "token.go"}}}); err != nil {
		t.Fatal(err)
	}
	mine := readNote(t, s, rel)
	mine = strings.Replace(mine, "## Old notes\n\nGone by now.\n\n", "", 1)
	mine = strings.Replace(mine, "## Shared\n\nv1\n", "## Shared\n\nv2\n", 1)
	mine = strings.Replace(mine, "stale: yes\ntags:\n", "reviewer: sam\nreviewers:\n  - ann\n  - bo\ndue: null\ntags:\n", 1)
	writeNote(t, s, rel, mine+"\n## My notes\n\nAsk Sam about the staging keys.\n")
	was := head(t, s)

	out, err := s.Rollback(RollbackOptions{Project: "demo", Checkpoint: cp.Checkpoint.ID})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.PersonCommit == "" || gitOut(t, s, "rev-parse", out.Result.PersonCommit+"^") != was {
		t.Fatalf("the person's edit was not committed first: %+v", out.Result)
	}
	noRewrite(t, s, out.Result.PersonCommit)
	if gitOut(t, s, "log", "-1", "--format=%s", out.Result.PersonCommit) != "edit: "+rel+" changed outside sessionvault" {
		t.Errorf("person commit: %s", gitOut(t, s, "log", "-1", "--format=%s", out.Result.PersonCommit))
	}
	got := readNote(t, s, rel)
	want := strings.Replace(atCheckpoint, "## Old notes\n\nGone by now.\n\n", "", 1) + "## My notes\n\nAsk Sam about the staging keys.\n"
	want = strings.Replace(want, "## Shared\n\nv1\n", "## Shared\n\nv2\n", 1)
	want = strings.Replace(want, "stale: yes\ntags:\n  - task\n", "tags:\n  - task\nreviewer: sam\nreviewers:\n  - ann\n  - bo\ndue:\n", 1) // null, as the engine writes it
	if got != want {
		t.Fatalf("after the rollback:\n%q\nwant:\n%q", got, want)
	}
	task, err := s.Task("demo", id)
	if err != nil || task.Phase != "" || task.Status != session.TaskPending || len(task.Immediate.Blockers) != 0 || len(task.KeyFiles) != 1 {
		t.Fatalf("task after the rollback = %+v, %v", task, err)
	}
	if gitOut(t, s, "status", "--porcelain") != "" {
		t.Errorf("the vault is not clean:\n%s", gitOut(t, s, "status", "--porcelain"))
	}
}

// TestRollbackRefusals: a rollback to nothing, to both a checkpoint and a
// version, to a version without a task, to a version or checkpoint that
// does not exist, of a task that does not exist or did not exist at the
// checkpoint, or of a task another holder locked is refused with its code
// and changes nothing: no commit, no tag, no note.
func TestRollbackRefusals(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	newTask(t, s, NewTaskOptions{Name: "A"})
	cp, err := s.CreateCheckpoint(CheckpointOptions{Project: "demo", Label: "early"})
	if err != nil {
		t.Fatal(err)
	}
	newTask(t, s, NewTaskOptions{Name: "Later"})
	newTask(t, s, NewTaskOptions{Name: "Held"})
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "a", Updates: TaskUpdate{Phase: strp("x")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LockTask("demo", "held", "other-session", nil); err != nil {
		t.Fatal(err)
	}
	id := cp.Checkpoint.ID
	before := snapshot(t, s)
	for _, c := range []struct {
		what string
		o    RollbackOptions
		code errs.Code
	}{
		{"no target", RollbackOptions{TaskID: "a"}, errs.UpdateValidationFailed},
		{"two targets", RollbackOptions{TaskID: "a", Checkpoint: id, Version: 1}, errs.UpdateValidationFailed},
		{"a version without a task", RollbackOptions{Version: 1}, errs.UpdateValidationFailed},
		{"version 99", RollbackOptions{TaskID: "a", Version: 99}, errs.VersionNotFound},
		{"version -1", RollbackOptions{TaskID: "a", Version: -1}, errs.VersionNotFound},
		{"a checkpoint that does not exist", RollbackOptions{Checkpoint: "cp-1-abcdef"}, errs.CheckpointNotFound},
		{"a checkpoint id of another form", RollbackOptions{Checkpoint: "v1.0"}, errs.CheckpointNotFound},
		{"a checkpoint id that is a path", RollbackOptions{Checkpoint: "cp-../../x"}, errs.CheckpointNotFound},
		{"a task that does not exist", RollbackOptions{TaskID: "nowhere", Checkpoint: id}, errs.TaskNotFound},
		{"a task made after the checkpoint", RollbackOptions{TaskID: "later", Checkpoint: id}, errs.RollbackFailed},
		{"a task another holder locked", RollbackOptions{TaskID: "held", Version: 1}, errs.TaskLocked},
		{"a missing project", RollbackOptions{Project: "nope", Checkpoint: id}, errs.ProjectNotFound},
	} {
		if c.o.Project == "" {
			c.o.Project = "demo"
		}
		if _, err := s.Rollback(c.o); !hasCode(err, c.code) {
			t.Errorf("%s: error %v, want %s", c.what, err, c.code.Name)
		}
	}
	unchanged(t, s, before)
}

// TestRollbackGlobal: a global checkpoint rolls the project's canonical
// notes and every task note it holds back (tasks made since stay), keeping
// the person's sections of the current state, in one commit; a rollback to
// a checkpoint of an earlier session is refused, and one to a checkpoint
// whose notes are as they are now commits nothing.
func TestRollbackGlobal(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "Global rollback"}); err != nil {
		t.Fatal(err)
	}
	step := func(msg string, progress int) {
		t.Helper()
		now = now.Add(time.Minute)
		if _, err := s.Update(session.UpdateOptions{Project: "demo", Message: msg, Progress: &progress}); err != nil {
			t.Fatal(err)
		}
	}
	step("first step", 10)
	newTask(t, s, NewTaskOptions{Name: "Parser"})
	now = now.Add(time.Minute)
	cp, err := s.CreateCheckpoint(CheckpointOptions{Project: "demo", Label: "after the first step", Type: "milestone"})
	if err != nil {
		t.Fatal(err)
	}
	const state = "demo/session-current-state.md"
	stateAt, parserAt := readNote(t, s, state), readNote(t, s, "demo/tasks/parser.md")

	step("second step", 60)
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "parser", Updates: TaskUpdate{Phase: strp("implementation")}}); err != nil {
		t.Fatal(err)
	}
	newTask(t, s, NewTaskOptions{Name: "Later"})
	later := readNote(t, s, "demo/tasks/later.md")
	writeNote(t, s, state, readNote(t, s, state)+"\n## Person notes\n\nKeep this.\n")

	now = now.Add(time.Minute)
	out, err := s.Rollback(RollbackOptions{Project: "demo", Checkpoint: cp.Checkpoint.ID})
	if err != nil {
		t.Fatal(err)
	}
	// The note ends in a blank line: the person's section follows it.
	if got := readNote(t, s, state); got != stateAt+"## Person notes\n\nKeep this.\n" {
		t.Errorf("current state after the rollback:\n%s\nwant:\n%s## Person notes\n\nKeep this.\n", got, stateAt)
	}
	if got := readNote(t, s, "demo/tasks/parser.md"); got != parserAt {
		t.Errorf("parser after the rollback:\n%s\nwant:\n%s", got, parserAt)
	}
	if readNote(t, s, "demo/tasks/later.md") != later {
		t.Error("a task made after the checkpoint changed")
	}
	restored := strings.Join(out.Restored, ",")
	if !strings.Contains(restored, state) || !strings.Contains(restored, "demo/tasks/parser.md") || strings.Contains(restored, "later") {
		t.Errorf("restored = %v", out.Restored)
	}
	if out.TaskID != "" || out.RestoredState != nil || out.BackupCheckpointID == "" {
		t.Errorf("outcome = %+v", out)
	}
	noRewrite(t, s, out.Result.PersonCommit)
	cur, err := s.Status("demo")
	if err != nil || cur.Progress != 10 || len(cur.Updates) != 1 {
		t.Fatalf("state after the rollback: progress %d, %d updates, %v", cur.Progress, len(cur.Updates), err)
	}
	cps, err := s.Checkpoints("demo")
	if err != nil || len(cps) != 2 || cps[1].ID != out.BackupCheckpointID || cps[1].Scope != "global" || cps[1].Type != "auto" {
		t.Fatalf("checkpoints after the rollback = %+v, %v", cps, err)
	}

	// The same rollback again: nothing differs, nothing is committed.
	n := commitCount(t, s)
	again, err := s.Rollback(RollbackOptions{Project: "demo", Checkpoint: cp.Checkpoint.ID})
	if err != nil || len(again.Restored) != 0 || again.BackupCheckpointID != "" || again.Result.Commit != "" || commitCount(t, s) != n {
		t.Fatalf("a rollback with nothing to restore = %+v, %v (%d commits, was %d)", again, err, commitCount(t, s), n)
	}

	// Another session: the first session's checkpoint is refused.
	if _, err := s.End("demo", "done", nil); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "Next"}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	_, err = s.Rollback(RollbackOptions{Project: "demo", Checkpoint: cp.Checkpoint.ID})
	wantCode(t, err, errs.RollbackFailed)
	if !strings.Contains(err.Error(), "does not cross sessions") {
		t.Errorf("error %q", err)
	}
	unchanged(t, s, before)
	// A task of that checkpoint still rolls back on its own.
	if _, err := s.Rollback(RollbackOptions{Project: "demo", TaskID: "parser", Checkpoint: cp.Checkpoint.ID}); err != nil {
		t.Fatalf("a task of the checkpoint: %v", err)
	}
}

// TestRollbackWithoutTheTag: a checkpoint whose tag is gone (a kill
// between the commit and the tag) is found by the commit that listed it,
// and a backup checkpoint whose tag is gone by the commit before the
// rollback that listed it.
func TestRollbackWithoutTheTag(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	id := newTask(t, s, NewTaskOptions{Name: "Parser"})
	rel := session.TaskPath("demo", id)
	cp, err := s.CreateCheckpoint(CheckpointOptions{Project: "demo", Label: "start", Tasks: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	first := readNote(t, s, rel)
	for i := 1; i <= 2; i++ {
		now = now.Add(time.Minute)
		if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Iteration: intp(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	last := readNote(t, s, rel)
	gitOut(t, s, "tag", "-d", "checkpoint/"+cp.Checkpoint.ID)

	out, err := s.Rollback(RollbackOptions{Project: "demo", TaskID: id, Checkpoint: cp.Checkpoint.ID})
	if err != nil {
		t.Fatalf("rollback to an untagged checkpoint: %v", err)
	}
	if readNote(t, s, rel) != first {
		t.Fatalf("after the rollback:\n%s\nwant:\n%s", readNote(t, s, rel), first)
	}
	gitOut(t, s, "tag", "-d", "checkpoint/"+out.BackupCheckpointID)
	if _, err := s.Rollback(RollbackOptions{Project: "demo", TaskID: id, Checkpoint: out.BackupCheckpointID, NoBackup: true}); err != nil {
		t.Fatalf("rollback to an untagged backup: %v", err)
	}
	if readNote(t, s, rel) != last {
		t.Fatalf("after rolling forward:\n%s\nwant:\n%s", readNote(t, s, rel), last)
	}
}

// TestRollbackOfACheckpointsTasks: without a task named, a checkpoint of
// several tasks rolls back each of them, and no other task.
func TestRollbackOfACheckpointsTasks(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	for _, name := range []string{"A", "B", "C"} {
		newTask(t, s, NewTaskOptions{Name: name})
	}
	cp, err := s.CreateCheckpoint(CheckpointOptions{Project: "demo", Label: "two", Tasks: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]string{}
	for _, id := range []string{"a", "b"} {
		at[id] = readNote(t, s, session.TaskPath("demo", id))
	}
	now = now.Add(time.Minute)
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Phase: strp("moved on")}}); err != nil {
			t.Fatal(err)
		}
	}
	c := readNote(t, s, "demo/tasks/c.md")
	out, err := s.Rollback(RollbackOptions{Project: "demo", Checkpoint: cp.Checkpoint.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Restored) != 2 {
		t.Errorf("restored %v", out.Restored)
	}
	for id, want := range at {
		if got := readNote(t, s, session.TaskPath("demo", id)); got != want {
			t.Errorf("%s after the rollback:\n%s\nwant:\n%s", id, got, want)
		}
	}
	if readNote(t, s, "demo/tasks/c.md") != c {
		t.Error("a task the checkpoint does not hold was rolled back")
	}
	cps, err := s.Checkpoints("demo")
	if err != nil || len(cps) != 2 || cps[1].Scope != "multi_task" || strings.Join(cps[1].Tasks, ",") != "a,b" {
		t.Fatalf("the backup = %+v, %v", cps, err)
	}
	if !strings.Contains(lastMessage(t, s), "Rollback-To: "+cp.Checkpoint.ID) {
		t.Errorf("commit message:\n%s", lastMessage(t, s))
	}
}
