package tasks

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// TestCreateCheckpoint: a checkpoint of the project, a task or several is
// one commit that adds its line to checkpoints.md, and the annotated tag
// checkpoint/<id> on that commit; its scope follows the number of tasks.
// Checkpoints lists them back from the tags, oldest first, with every
// field the tag's message holds.
func TestCreateCheckpoint(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	newTask(t, s, NewTaskOptions{Name: "A"})
	newTask(t, s, NewTaskOptions{Name: "B"})
	idRe := regexp.MustCompile(`^cp-(\d+)-[0-9a-f]{6}$`)
	var made []Checkpoint
	for i, c := range []struct {
		o         CheckpointOptions
		scope     string
		lineTail  string
		createdBy string
	}{
		{CheckpointOptions{Label: "Start", Type: "milestone", CreatedBy: "agent-a"}, "global", " · milestone · global", "agent-a"},
		{CheckpointOptions{Label: "A done · almost", Description: "the · lexer", Tasks: []string{"a"}}, "task", " · manual · task [[demo/tasks/a|a]] · the, lexer", "machine:"},
		{CheckpointOptions{Label: "Both", Tasks: []string{"b", "a"}, Type: "pre_migration"}, "multi_task", " · pre_migration · multi_task [[demo/tasks/b|b]], [[demo/tasks/a|a]]", "machine:"},
	} {
		now = now.Add(time.Minute)
		c.o.Project = "demo"
		before := commitCount(t, s)
		out, err := s.CreateCheckpoint(c.o)
		if err != nil {
			t.Fatal(err)
		}
		cp := out.Checkpoint
		m := idRe.FindStringSubmatch(cp.ID)
		if m == nil || m[1] != strconv.FormatInt(now.Unix(), 10) {
			t.Fatalf("checkpoint id %q, want cp-%d-<6 hex>", cp.ID, now.Unix())
		}
		if cp.Scope != c.scope || !strings.HasPrefix(cp.CreatedBy, c.createdBy) || cp.Commit == "" || cp.Commit != out.Result.Commit || !cp.CreatedAt.Equal(now) {
			t.Fatalf("checkpoint %d = %+v", i, cp)
		}
		if got := commitCount(t, s); got != before+1 || head(t, s) != cp.Commit {
			t.Fatalf("checkpoint %d: %d commits (want %d), HEAD %s, checkpoint commit %s", i, got, before+1, head(t, s), cp.Commit)
		}
		if files := gitOut(t, s, "show", "--name-only", "--format=", "HEAD"); files != "demo/checkpoints.md" {
			t.Errorf("the checkpoint commit holds %q", files)
		}
		msg := lastMessage(t, s)
		if !strings.Contains(msg, "Checkpoint: "+cp.ID) || !strings.Contains(msg, "Change-Type: checkpoint") {
			t.Errorf("commit message:\n%s", msg)
		}
		tag := "checkpoint/" + cp.ID
		if typ := gitOut(t, s, "cat-file", "-t", tag); typ != "tag" {
			t.Errorf("%s is a %s, want an annotated tag", tag, typ)
		}
		if at := gitOut(t, s, "rev-parse", tag+"^{commit}"); at != cp.Commit {
			t.Errorf("%s names %s, want %s", tag, at, cp.Commit)
		}
		list := readNote(t, s, "demo/checkpoints.md")
		label := strings.ReplaceAll(cp.Label, " · ", ", ")
		line := "- " + rfc3339(now) + " · `" + cp.ID + "` · **" + label + "**" + c.lineTail + " ^" + cp.ID + "\n"
		if !strings.Contains(list, line) {
			t.Errorf("checkpoints.md lacks\n%s\nin\n%s", line, list)
		}
		if !strings.Contains(list, "checkpoints: "+strconv.Itoa(i+1)+"\n") {
			t.Errorf("checkpoints.md does not count %d:\n%s", i+1, list)
		}
		made = append(made, cp)
	}

	listed, err := s.Checkpoints("demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(made) {
		t.Fatalf("listed %d checkpoints, made %d", len(listed), len(made))
	}
	for i, got := range listed {
		want := made[i]
		want.Project = ""
		got.Project = ""
		if got.ID != want.ID || got.Label != want.Label || got.Description != want.Description || got.Type != want.Type ||
			got.Scope != want.Scope || !slices.Equal(got.Tasks, want.Tasks) || got.CreatedBy != want.CreatedBy ||
			!got.CreatedAt.Equal(want.CreatedAt) || got.Commit != want.Commit {
			t.Errorf("listed %d = %+v\nwant %+v", i, got, want)
		}
	}
}

// rfc3339 formats a time as the notes do.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// TestCreateCheckpointRefusals: an empty label, an unknown type, a task
// named twice or a task that has no note is refused and makes neither a
// commit nor a tag.
func TestCreateCheckpointRefusals(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "A"})
	before := snapshot(t, s)
	for _, c := range []struct {
		what string
		o    CheckpointOptions
		code errs.Code
	}{
		{"an empty label", CheckpointOptions{Label: " "}, errs.UpdateValidationFailed},
		{"an unknown type", CheckpointOptions{Label: "x", Type: "weekly"}, errs.UpdateValidationFailed},
		{"a task named twice", CheckpointOptions{Label: "x", Tasks: []string{"a", "a"}}, errs.InvalidCheckpointScope},
		{"a missing task", CheckpointOptions{Label: "x", Tasks: []string{"a", "nowhere"}}, errs.TaskNotFound},
		{"a missing project", CheckpointOptions{Project: "nope", Label: "x"}, errs.ProjectNotFound},
	} {
		if c.o.Project == "" {
			c.o.Project = "demo"
		}
		if _, err := s.CreateCheckpoint(c.o); !hasCode(err, c.code) {
			t.Errorf("%s: error %v, want %s", c.what, err, c.code.Name)
		}
	}
	unchanged(t, s, before)
}

// TestCheckpointsOfAProject: a project lists only its own checkpoints (not
// another project's, nor a tag that names no project), and cannot roll
// back to another project's.
func TestCheckpointsOfAProject(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	if _, err := s.InitProject("other"); err != nil {
		t.Fatal(err)
	}
	mine, err := s.CreateCheckpoint(CheckpointOptions{Project: "demo", Label: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := s.CreateCheckpoint(CheckpointOptions{Project: "other", Label: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	gitOut(t, s, "tag", "-a", "-m", "by hand", "checkpoint/cp-1-abcdef", "HEAD")
	for project, want := range map[string]string{"demo": mine.Checkpoint.ID, "other": theirs.Checkpoint.ID} {
		cps, err := s.Checkpoints(project)
		if err != nil || len(cps) != 1 || cps[0].ID != want {
			t.Errorf("checkpoints of %s = %+v, %v; want only %s", project, cps, err, want)
		}
	}
	before := snapshot(t, s)
	_, err = s.Rollback(RollbackOptions{Project: "demo", Checkpoint: theirs.Checkpoint.ID})
	wantCode(t, err, errs.CheckpointNotFound)
	if !strings.Contains(err.Error(), "belongs to project other") {
		t.Errorf("error %q does not name the project", err)
	}
	unchanged(t, s, before)
}

// TestSyncHotContext: sync lists in checkpoints.md each checkpoint tag of
// the project it does not list yet (a tag fetched from another clone), in
// one commit, and nothing — no commit — when none is missing; it counts
// the active task contexts (or those named) and names the active task.
func TestSyncHotContext(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	newTask(t, s, NewTaskOptions{Name: "A"})
	newTask(t, s, NewTaskOptions{Name: "B"})
	newTask(t, s, NewTaskOptions{Name: "Done"})
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "done", Updates: TaskUpdate{Status: strp(session.TaskCompleted)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SwitchTask(SwitchOptions{Project: "demo", To: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCheckpoint(CheckpointOptions{Project: "demo", Label: "listed"}); err != nil {
		t.Fatal(err)
	}
	// A tag made on another clone: its message holds the fields.
	elsewhere := Checkpoint{ID: "cp-1700000000-abcdef", Label: "made elsewhere", Type: "manual", Scope: "task", Tasks: []string{"a"},
		CreatedAt: fixedClock.Add(-time.Hour), CreatedBy: "other-session", Project: "demo"}
	if err := s.tagCheckpoint(elsewhere, head(t, s)); err != nil {
		t.Fatal(err)
	}
	before := commitCount(t, s)
	out, err := s.SyncHotContext("demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Success || out.CheckpointsListed != 1 || out.TaskContexts != 2 || out.ActiveTask != "b" || out.Result.Commit == "" {
		t.Fatalf("sync = %+v", out)
	}
	if commitCount(t, s) != before+1 || !strings.Contains(lastMessage(t, s), "checkpoint-sync: 1 checkpoints listed") {
		t.Fatalf("sync commit:\n%s", lastMessage(t, s))
	}
	list := readNote(t, s, "demo/checkpoints.md")
	if want := "- 2026-03-02T08:00:00Z · `cp-1700000000-abcdef` · **made elsewhere** · manual · task [[demo/tasks/a|a]] ^cp-1700000000-abcdef\n"; !strings.Contains(list, want) {
		t.Fatalf("checkpoints.md lacks\n%s\nin\n%s", want, list)
	}
	if !strings.Contains(list, "checkpoints: 2\n") {
		t.Errorf("checkpoints.md count:\n%s", list)
	}

	// Again: nothing missing, no commit; the tasks named are counted.
	before = commitCount(t, s)
	out, err = s.SyncHotContext("demo", []string{"done"})
	if err != nil || out.CheckpointsListed != 0 || out.TaskContexts != 1 || out.Result.Commit != "" {
		t.Fatalf("second sync = %+v, %v", out, err)
	}
	if commitCount(t, s) != before {
		t.Fatal("a sync with nothing to list made a commit")
	}
	if _, err := s.SyncHotContext("nope", nil); !hasCode(err, errs.ProjectNotFound) {
		t.Fatalf("sync of a missing project: %v", err)
	}
}

// TestParseCheckpointTag: a tag's message reads back as the checkpoint:
// its first line the label, the first other free line the description,
// the trailers its fields; a tag with no trailers is a checkpoint of no
// project.
func TestParseCheckpointTag(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name string
		msg  string
		want Checkpoint
	}{
		{"full", "Label\n\nA description\n\nCheckpoint-Id: cp-1-abcdef\nCheckpoint-Type: auto\nCheckpoint-Scope: multi_task\nProject: demo\nTasks: a, b,\nCreated-By: s1\nCreated-At: 2026-03-02T09:00:00Z\n",
			Checkpoint{Label: "Label", Description: "A description", Type: "auto", Scope: "multi_task", Project: "demo", Tasks: []string{"a", "b"}, CreatedBy: "s1", CreatedAt: fixedClock}},
		{"label only", "by hand\n", Checkpoint{Label: "by hand", Tasks: []string{}, CreatedAt: when}},
		{"global, its empty Tasks trailer stripped by git", "G\n\nCheckpoint-Id: cp-1-abcdef\nCheckpoint-Scope: global\nProject: demo\nTasks:\nCreated-By:\n",
			Checkpoint{Label: "G", Scope: "global", Project: "demo", Tasks: []string{}, CreatedAt: when}},
		{"description with a colon", "L\n\nNote: read this\nProject: demo\nCreated-At: yesterday\n",
			Checkpoint{Label: "L", Description: "Note: read this", Project: "demo", Tasks: []string{}, CreatedAt: when}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := parseCheckpointTag(vault.Tag{Name: "checkpoint/cp-1-abcdef", Commit: "c0ffee", Time: when, Message: c.msg})
			c.want.ID, c.want.Commit = "cp-1-abcdef", "c0ffee"
			if got.ID != c.want.ID || got.Commit != c.want.Commit || got.Label != c.want.Label || got.Description != c.want.Description ||
				got.Type != c.want.Type || got.Scope != c.want.Scope || got.Project != c.want.Project || !slices.Equal(got.Tasks, c.want.Tasks) ||
				got.CreatedBy != c.want.CreatedBy || !got.CreatedAt.Equal(c.want.CreatedAt) {
				t.Errorf("parsed %+v\nwant   %+v", got, c.want)
			}
		})
	}
}
