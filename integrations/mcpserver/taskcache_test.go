package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// graphIDs returns the task ids of a get_task_graph list, sorted.
func graphIDs(v any) []string {
	var out []string
	for _, n := range list(v) {
		out = append(out, fmt.Sprint(obj(n)["task_id"]))
	}
	slices.Sort(out)
	return out
}

// idList returns a get_task_graph list of task ids (ready_tasks,
// blocked_tasks), sorted.
func idList(v any) []string {
	var out []string
	for _, id := range list(v) {
		out = append(out, id.(string))
	}
	slices.Sort(out)
	return out
}

// ageTaskNotes sets every task note's modification time to an hour ago, as
// a vault's notes are between two calls of an agent, and returns that time.
func (e *testEnv) ageTaskNotes() time.Time {
	e.t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	notes, _ := filepath.Glob(filepath.Join(e.root, "demo", "tasks", "*.md"))
	if len(notes) == 0 {
		e.t.Fatal("no task notes")
	}
	for _, p := range notes {
		if err := os.Chtimes(p, old, old); err != nil {
			e.t.Fatal(err)
		}
	}
	return old
}

// replaceInNote replaces old by new (once) in the vault file rel, in place,
// as a person's editor saves it.
func (e *testEnv) replaceInNote(rel, old, new string) {
	e.t.Helper()
	text := e.note(rel)
	if !strings.Contains(text, old) {
		e.t.Fatalf("%s does not hold %q:\n%s", rel, old, text)
	}
	e.edit(rel, strings.Replace(text, old, new, 1))
}

// The server keeps the tasks it read between calls, and every change made
// to a task note behind its back is in the next get_task_graph: a person's
// edit that keeps the note's size (its modification time then set back, as
// a tool that keeps times does), git checking the note out, the same-size
// edit right after a call, a note removed.
func TestTaskGraphSeesNotesChangedBehindTheServer(t *testing.T) {
	e := newEnv(t)
	e.ok("create_task", map[string]any{"name": "Schema"})
	e.ok("create_task", map[string]any{"name": "API", "depends_on": []string{"schema"}})
	old := e.ageTaskNotes()
	graph := func(ready, blocked string) {
		t.Helper()
		g := e.ok("get_task_graph", nil)
		if got := strings.Join(idList(g["ready_tasks"]), ","); got != ready {
			t.Fatalf("ready_tasks = %s, want %s", got, ready)
		}
		if got := strings.Join(idList(g["blocked_tasks"]), ","); got != blocked {
			t.Fatalf("blocked_tasks = %s, want %s", got, blocked)
		}
	}
	graph("schema", "api")
	graph("schema", "api")

	schema := "demo/tasks/schema.md"
	e.replaceInNote(schema, "status: pending", "status: blocked")
	if err := os.Chtimes(filepath.Join(e.root, "demo", "tasks", "schema.md"), old, old); err != nil {
		t.Fatal(err)
	}
	graph("", "api,schema")

	gitIn(t, e.root, "checkout", "--", schema)
	graph("schema", "api")

	e.replaceInNote(schema, "status: pending", "status: blocked")
	graph("", "api,schema")

	e.edit("demo/tasks/api.md", "")
	g := e.ok("get_task_graph", map[string]any{"include_completed": true})
	if got := graphIDs(g["nodes"]); !slices.Equal(got, []string{"schema"}) {
		t.Fatalf("nodes after api.md was removed = %v", got)
	}
}

// get_task_graph's result, marshalled once by the server, has the shape its
// listed output schema says, and its arguments are checked as every tool's
// are: a wrong type or an unknown argument is E1612 naming the argument
// check.
func TestTaskGraphResultAndArguments(t *testing.T) {
	e := newEnv(t)
	e.ok("create_task", map[string]any{"name": "Schema"})
	e.ok("create_task", map[string]any{"name": "API", "depends_on": []string{"schema"}})
	tools, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema *jsonschema.Schema
	for _, tl := range tools.Tools {
		if tl.Name == "get_task_graph" {
			data, _ := json.Marshal(tl.OutputSchema)
			if err := json.Unmarshal(data, &schema); err != nil {
				t.Fatal(err)
			}
		}
	}
	if schema == nil {
		t.Fatal("get_task_graph is not listed with an output schema")
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{nil, {"task_id": "api", "depth": 1}, {"include_completed": true}} {
		out := e.ok("get_task_graph", args)
		if err := resolved.Validate(out); err != nil {
			t.Fatalf("get_task_graph %v does not match its output schema: %v\n%v", args, err, out)
		}
	}
	for _, args := range []map[string]any{{"depth": "abc"}, {"task": "api"}} {
		if text := e.fail("get_task_graph", args, "E1612 UPDATE_VALIDATION_FAILED"); !strings.Contains(text, "invalid argument: validating") {
			t.Fatalf("get_task_graph %v: %s", args, text)
		}
	}
}
