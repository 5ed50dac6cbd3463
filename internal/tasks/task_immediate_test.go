package tasks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
)

// TestImmediateFieldsMergeInsideTheOperation: task update's immediate
// context flags change only their fields, merged with the note as it is when
// the operation runs: a change another writer made after the flags were
// read (another process's --notes, a person's edit of a line in Obsidian)
// is kept, not written back with its old value.
func TestImmediateFieldsMergeInsideTheOperation(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	out, err := s.TaskNew(NewTaskOptions{Project: "demo", Name: "Merge inside"})
	if err != nil {
		t.Fatal(err)
	}
	id := out.Task.ID
	save := func(p ImmediatePatch) {
		t.Helper()
		now = now.Add(time.Minute)
		if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{ImmediateFields: &p}}); err != nil {
			t.Fatal(err)
		}
	}
	save(ImmediatePatch{WorkingOn: strp("the parser"), Notes: strp("first notes"), Blockers: &[]string{"CI is red"}})

	// This process parsed --next-step; before it runs, another writer
	// changes the notes, and a person edits the working-on line by hand.
	mine := ImmediatePatch{NextStep: strp("write the test")}
	save(ImmediatePatch{Notes: strp("notes from the other process")})
	rel := filepath.Join(s.V.Root, "demo", session.TasksDir, id+".md")
	data, err := os.ReadFile(rel)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "the parser", "the parser, by hand", 1)
	if edited == string(data) {
		t.Fatalf("no working-on line to edit in:\n%s", data)
	}
	if err := os.WriteFile(rel, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	save(mine)

	task, err := s.Task("demo", id)
	if err != nil {
		t.Fatal(err)
	}
	want := ImmediateContext{WorkingOn: "the parser, by hand", NextStep: "write the test", Notes: "notes from the other process", Blockers: []string{"CI is red"}}
	got := task.Immediate
	if got.WorkingOn != want.WorkingOn || got.NextStep != want.NextStep || got.Notes != want.Notes || strings.Join(got.Blockers, "|") != "CI is red" {
		t.Fatalf("immediate context = %+v, want %+v", got, want)
	}

	// --blocker '' clears the blockers and nothing else.
	save(ImmediatePatch{Blockers: &[]string{}})
	if task, err = s.Task("demo", id); err != nil {
		t.Fatal(err)
	}
	if len(task.Immediate.Blockers) != 0 || task.Immediate.NextStep != "write the test" {
		t.Fatalf("after clearing the blockers: %+v", task.Immediate)
	}
}
