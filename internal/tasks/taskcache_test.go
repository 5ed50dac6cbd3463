package tasks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
)

// ageTaskNotes sets the modification time of every task note of project
// demo to an hour ago, as a vault's notes are between two calls of an
// agent, and returns that time.
func ageTaskNotes(t *testing.T, s *Service) time.Time {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	notes, err := filepath.Glob(filepath.Join(s.V.Root, "demo", session.TasksDir, "*.md"))
	if err != nil || len(notes) == 0 {
		t.Fatalf("no task notes: %v", err)
	}
	for _, p := range notes {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	return old
}

// sameGraph fails the test unless the graph read through the cache of cs is
// the one a fresh reading of every note gives, and so its JSON as cs keeps
// it (TaskGraphJSON, asked first: it sees the change itself), and returns
// it.
func sameGraph(t *testing.T, s, cs *Service, o GraphOptions) TaskGraph {
	t.Helper()
	o.Project = "demo"
	data, err := cs.TaskGraphJSON(o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cs.TaskGraphOf(o)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.TaskGraphOf(o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the graph read through the cache:\n%+v\ndiffers from a fresh reading:\n%+v", got, want)
	}
	if wantJSON, _ := json.Marshal(want); string(data) != string(wantJSON) {
		t.Fatalf("the graph's JSON through the cache:\n%s\ndiffers from a fresh reading's:\n%s", data, wantJSON)
	}
	return got
}

// The task graph's JSON is kept with the cache while no task note changes:
// once the cache holds every note, the graph asked again with the same
// options is the same bytes, neither built nor encoded again; other options
// have their own; a change to a note is in the next one; and a graph the
// caller changes changes none of them.
func TestTaskGraphJSONIsKeptWhileNoNoteChanges(t *testing.T) {
	t.Parallel()
	s := graphVault(t)
	score := 0.5
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "parser", Updates: TaskUpdate{Score: &score}}); err != nil {
		t.Fatal(err)
	}
	cs := s.WithCache(NewTaskCache())
	ageTaskNotes(t, s)
	graphJSON := func(o GraphOptions) []byte {
		t.Helper()
		o.Project = "demo"
		data, err := cs.TaskGraphJSON(o)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	whole, focus := GraphOptions{}, GraphOptions{TaskID: "parser", Depth: 1}
	graphJSON(whole) // reads every note into the cache
	first := graphJSON(whole)
	if again := graphJSON(whole); &again[0] != &first[0] {
		t.Fatal("the same graph asked again was made again")
	}
	f := graphJSON(focus)
	if string(f) == string(first) {
		t.Fatal("the focused graph is the whole graph")
	}
	if again := graphJSON(focus); &again[0] != &f[0] {
		t.Fatal("the same focused graph asked again was made again")
	}
	if again := graphJSON(whole); &again[0] != &first[0] {
		t.Fatal("the whole graph was made again after a focused one")
	}
	g, err := cs.TaskGraphOf(GraphOptions{Project: "demo", IncludeCompleted: true})
	if err != nil {
		t.Fatal(err)
	}
	scores := 0
	for i := range g.Nodes {
		g.Nodes[i].Name = "changed"
		if g.Nodes[i].Score != nil {
			*g.Nodes[i].Score = -1
			scores++
		}
	}
	if scores == 0 {
		t.Fatal("no node has a score")
	}
	sameGraph(t, s, cs, GraphOptions{IncludeCompleted: true})

	editNote(t, s, "demo/"+session.TasksDir+"/infra.md", "status: blocked", "status: pending")
	changed := graphJSON(whole)
	if string(changed) == string(first) {
		t.Fatal("the graph after infra changed is the one before")
	}
	sameGraph(t, s, cs, whole)
}

// A service with a task cache (as the MCP server holds between calls) sees
// every change made to the task notes behind its back on its next reading:
// a person's same-size edit with the modification time set back, a same-size
// edit right after a reading, an older version checked out by git, a note
// deleted, a task made by another process.
func TestTaskCacheSeesChangesBehindItsBack(t *testing.T) {
	t.Parallel()
	s := graphVault(t)
	cache := NewTaskCache()
	cs := s.WithCache(cache)
	old := ageTaskNotes(t, s)
	g := sameGraph(t, s, cs, GraphOptions{})
	if got := strings.Join(g.BlockedTasks, ","); got != "codegen,infra" {
		t.Fatalf("blocked = %s", got)
	}
	if cache.Len() != 6 {
		t.Fatalf("the cache holds %d tasks, want 6", cache.Len())
	}

	// A person sets infra back to pending in Obsidian: the note keeps its
	// size, and a tool that keeps times sets its modification time back.
	infra := "demo/" + session.TasksDir + "/infra.md"
	editNote(t, s, infra, "status: blocked", "status: pending")
	if err := os.Chtimes(filepath.Join(s.V.Root, filepath.FromSlash(infra)), old, old); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sameGraph(t, s, cs, GraphOptions{}).BlockedTasks, ","); got != "codegen" {
		t.Fatalf("blocked after infra was set to pending = %s", got)
	}

	// Right after that reading, the same edit back: same size, no pause.
	editNote(t, s, infra, "status: pending", "status: blocked")
	if got := strings.Join(sameGraph(t, s, cs, GraphOptions{}).BlockedTasks, ","); got != "codegen,infra" {
		t.Fatalf("blocked after infra was set back to blocked = %s", got)
	}

	// git checks out lexer's first version, before it was completed: parser
	// now waits on it.
	lexer := "demo/" + session.TasksDir + "/lexer.md"
	versions := strings.Fields(gitOut(t, s, "log", "--format=%H", "--", lexer))
	gitOut(t, s, "checkout", versions[len(versions)-1], "--", lexer)
	g = sameGraph(t, s, cs, GraphOptions{})
	if got := strings.Join(g.BlockedTasks, ","); got != "codegen,infra,parser" {
		t.Fatalf("blocked after lexer's first version was checked out = %s", got)
	}

	// Another process removes docs and makes a new task.
	if err := os.Remove(filepath.Join(s.V.Root, "demo", session.TasksDir, "docs.md")); err != nil {
		t.Fatal(err)
	}
	newTask(t, s, NewTaskOptions{Name: "Tests", DependsOn: []string{"codegen"}})
	g = sameGraph(t, s, cs, GraphOptions{IncludeCompleted: true})
	if got := nodeIDs(g.Nodes); got != "codegen,infra,lexer,old,parser,tests" {
		t.Fatalf("nodes after docs was removed and tests made = %s", got)
	}
	if cache.Len() != 6 {
		t.Fatalf("the cache holds %d tasks after docs was removed, want 6", cache.Len())
	}
}

// The tasks read through a cache are the caller's: changing them changes
// nothing the next reading returns.
func TestCachedTasksAreCopies(t *testing.T) {
	t.Parallel()
	s := graphVault(t)
	cs := s.WithCache(NewTaskCache())
	ageTaskNotes(t, s)
	first, err := cs.Tasks("demo")
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		first[i].Status = "changed"
		first[i].DependsOn = append(first[i].DependsOn[:0], "changed")
		first[i].KeyFiles = append(first[i].KeyFiles[:0], "changed")
		if first[i].Updated != nil {
			*first[i].Updated = time.Time{}
		}
	}
	again, err := cs.Tasks("demo")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := s.Tasks("demo")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, fresh) {
		t.Fatalf("a caller's change reached the cache:\n%+v\nwant\n%+v", again, fresh)
	}
}

// clone copies every list and pointer of a task (a field added to Task
// later is checked too).
func TestTaskCloneSharesNothing(t *testing.T) {
	t.Parallel()
	score, now := 0.5, time.Now()
	full := Task{Score: &score, Lock: &TaskLock{Holder: "s"}, Updated: &now, Immediate: ImmediateContext{Blockers: []string{"b"}}}
	// Every list field of Task and of its structs gets an item.
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Slice:
				if f.Len() == 0 {
					f.Set(reflect.Append(f, reflect.Zero(f.Type().Elem())))
				}
			case reflect.Struct:
				fill(f)
			case reflect.Pointer, reflect.Map:
				if f.IsNil() {
					t.Fatalf("Task field %s (%s) is not set by this test: give it a value", v.Type().Field(i).Name, f.Type())
				}
			}
		}
	}
	fill(reflect.ValueOf(&full).Elem())
	c := full.clone()
	if !reflect.DeepEqual(c, full) {
		t.Fatalf("clone = %+v, want %+v", c, full)
	}
	var check func(path string, a, b reflect.Value)
	check = func(path string, a, b reflect.Value) {
		for i := 0; i < a.NumField(); i++ {
			name := path + a.Type().Field(i).Name
			fa, fb := a.Field(i), b.Field(i)
			switch fa.Kind() {
			case reflect.Slice, reflect.Pointer, reflect.Map:
				if fa.Pointer() == fb.Pointer() {
					t.Errorf("the clone shares %s with the task", name)
				}
			case reflect.Struct:
				check(name+".", fa, fb)
			}
		}
	}
	check("", reflect.ValueOf(c), reflect.ValueOf(full))
}
