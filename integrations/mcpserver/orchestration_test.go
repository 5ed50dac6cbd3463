package mcpserver

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The task tools — create_task, save_context_snapshot, switch_task,
// create_checkpoint, rollback_to and get_unified_context with a task: the
// task notes in <project>/tasks/, checkpoints as git tags listed in
// checkpoints.md, a rollback that restores a note as a new commit after a
// backup checkpoint, and the errors with their codes.
func TestTaskTools(t *testing.T) {
	e := newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Tasks"})

	auth := e.ok("create_task", map[string]any{"name": "Auth flow", "priority": 2, "key_files": []string{"auth.go"}})
	if auth["task_id"] != "auth-flow" || auth["note"] != "demo/tasks/auth-flow.md" || auth["commit"] != e.headCommit() {
		t.Fatalf("create_task = %v", auth)
	}
	if n := e.note("demo/tasks/auth-flow.md"); prop(n, "type") != "task" || prop(n, "name") != "Auth flow" || prop(n, "priority") != "2" || prop(n, "status") != "pending" {
		t.Fatalf("the task note:\n%s", n)
	}
	login := e.ok("create_task", map[string]any{"name": "Login page", "task_id": "login", "key_files": []string{"auth.go"}, "depends_on": []string{"auth-flow"}, "parent": "auth-flow"})
	if login["task_id"] != "login" {
		t.Fatalf("create_task with an id = %v", login)
	}
	e.fail("create_task", map[string]any{"name": "Orphan", "depends_on": []string{"nope"}}, "E1610 TASK_NOT_FOUND")
	e.fail("create_task", map[string]any{"name": "Bad", "task_id": "Bad Id"}, "E1616 PATH_OUTSIDE_VAULT")

	save := e.ok("save_context_snapshot", map[string]any{"task_id": "auth-flow", "change_summary": "designed", "change_type": "checkpoint",
		"updates": map[string]any{"current_phase": "design", "iteration": 2, "score": 0.5, "status": "in_progress",
			"immediate_context": map[string]any{"working_on": "schema", "last_action": "drafted", "next_step": "review", "blockers": []string{"keys"}, "notes": "ask ops"},
			"key_files":         []string{"auth.go", "keys.go"}, "technical_decisions": []string{"jwt"}, "resume_prompt": "continue with the schema", "locked_elements": []string{"api"}}})
	if save["success"] != true || save["task_id"] != "auth-flow" || save["version"] != float64(2) || save["commit"] != e.headCommit() || obj(save["saved_to"])["commit"] != true {
		t.Fatalf("save_context_snapshot = %v", save)
	}
	n := e.note("demo/tasks/auth-flow.md")
	for _, want := range []string{"- **Working on:** schema\n", "- **Last action:** drafted\n", "- **Next step:** review\n", "- **Blockers:** keys\n", "- **Notes:** ask ops\n",
		"- `keys.go`\n", "## Technical decisions\n\n- jwt\n", "## Resume prompt\n\ncontinue with the schema\n"} {
		if !strings.Contains(n, want) {
			t.Errorf("the saved task note lacks %q:\n%s", want, n)
		}
	}
	if prop(n, "phase") != "design" || prop(n, "iteration") != "2" || prop(n, "score") != "0.5" || prop(n, "status") != "in_progress" || !strings.Contains(n, "\nlocked_elements:\n  - api\n") {
		t.Fatalf("the saved task's properties:\n%s", n)
	}
	e.fail("save_context_snapshot", map[string]any{"task_id": "nope"}, "E1610 TASK_NOT_FOUND")
	e.fail("save_context_snapshot", map[string]any{"task_id": "auth-flow", "change_type": "bogus"}, "E1612 UPDATE_VALIDATION_FAILED")
	e.fail("save_context_snapshot", map[string]any{"task_id": "auth-flow", "updates": map[string]any{"status": "bogus"}}, "E1612 UPDATE_VALIDATION_FAILED")

	// Checkpoints: one per scope, each a tag and a line of checkpoints.md.
	cp := e.ok("create_checkpoint", map[string]any{"label": "designed", "task_id": "auth-flow", "description": "schema agreed", "checkpoint_type": "milestone"})
	id, _ := cp["checkpoint_id"].(string)
	if cp["success"] != true || cp["scope"] != "task" || !strings.HasPrefix(id, "cp-") || !slices.Equal(list(cp["included_tasks"]), []any{"auth-flow"}) ||
		cp["created_at"] != "2026-11-23T10:00:00Z" || cp["commit"] != e.headCommit() {
		t.Fatalf("create_checkpoint = %v", cp)
	}
	if multi := e.ok("create_checkpoint", map[string]any{"label": "both", "task_id": "auth-flow", "include_tasks": []string{"login"}}); multi["scope"] != "multi_task" {
		t.Fatalf("create_checkpoint multi_task = %v", multi)
	}
	if g := e.ok("create_checkpoint", map[string]any{"label": "all"}); g["scope"] != "global" || len(list(g["included_tasks"])) != 0 {
		t.Fatalf("create_checkpoint global = %v", g)
	}
	if tags := e.git("tag", "--list", "checkpoint/*"); strings.Count(tags, "\n") != 3 || !strings.Contains(tags, "checkpoint/"+id+"\n") {
		t.Fatalf("checkpoint tags:\n%s", tags)
	}
	if cps := e.note("demo/checkpoints.md"); !strings.Contains(cps, "`"+id+"` · **designed** · milestone · task [[demo/tasks/auth-flow|auth-flow]] · schema agreed ^"+id) {
		t.Fatalf("checkpoints.md:\n%s", cps)
	}
	e.fail("create_checkpoint", map[string]any{"label": "x", "task_id": "nope"}, "E1620 CHECKPOINT_CREATION_FAILED")
	e.fail("create_checkpoint", map[string]any{"label": "x", "checkpoint_type": "weird"}, "E1612 UPDATE_VALIDATION_FAILED")
	e.fail("create_checkpoint", map[string]any{"label": ""}, "E1612 UPDATE_VALIDATION_FAILED")
	atCheckpoint := e.note("demo/tasks/auth-flow.md")

	// Switching saves the source task and loads the target in one commit.
	head := e.headCommit()
	sw := e.ok("switch_task", map[string]any{"from_task_id": "auth-flow", "to_task_id": "login",
		"current_task_updates": map[string]any{"current_phase": "paused", "iteration": 3, "immediate_context": map[string]any{"working_on": "waiting for review"}}})
	prev, next := obj(sw["previous_task"]), obj(sw["new_task"])
	if prev["saved"] != true || prev["version"] != float64(3) || next["task_id"] != "login" || next["status"] != "in_progress" || len(list(sw["blocked_by"])) != 1 {
		t.Fatalf("switch_task = %v", sw)
	}
	if got := e.subjects(head); !slices.Equal(got, []string{"task-switch: to login"}) {
		t.Fatalf("switch_task's commits = %q", got)
	}
	if n := e.note("demo/tasks/auth-flow.md"); prop(n, "phase") != "paused" || !strings.Contains(n, "- **Working on:** waiting for review\n") {
		t.Fatalf("the source task after switch_task:\n%s", n)
	}
	if back := e.ok("switch_task", map[string]any{"from_task_id": "login", "to_task_id": "auth-flow", "save_current_state": false}); obj(back["previous_task"])["saved"] != false {
		t.Fatalf("switch_task without saving = %v", back)
	}
	e.fail("switch_task", map[string]any{"to_task_id": "nope"}, "E1661 TARGET_TASK_NOT_FOUND")
	e.fail("switch_task", map[string]any{"from_task_id": "nope", "to_task_id": "login"}, "E1660 SOURCE_TASK_NOT_FOUND")

	// Rolling back to the checkpoint restores the note as it was then.
	head = e.headCommit()
	rb := e.ok("rollback_to", map[string]any{"task_id": "auth-flow", "target": map[string]any{"type": "checkpoint", "checkpoint_id": id}})
	backup, _ := rb["backup_checkpoint_id"].(string)
	if rb["success"] != true || !strings.HasPrefix(backup, "cp-") || backup == id {
		t.Fatalf("rollback_to a checkpoint = %v", rb)
	}
	if now := e.note("demo/tasks/auth-flow.md"); now != atCheckpoint {
		t.Fatalf("rollback_to did not restore the note:\n%s\nwant\n%s", now, atCheckpoint)
	}
	if got := e.subjects(head); len(got) != 1 || !strings.HasPrefix(got[0], "rollback: ") {
		t.Fatalf("rollback_to's commits = %q", got)
	}
	tags := e.git("tag", "--list", "checkpoint/*")
	rb = e.ok("rollback_to", map[string]any{"task_id": "auth-flow", "target": map[string]any{"type": "version", "version": 1}, "create_backup": false})
	if rb["backup_checkpoint_id"] != nil || !slices.Equal(list(rb["restored"]), []any{"demo/tasks/auth-flow.md"}) || obj(rb["restored_state"])["status"] != "pending" {
		t.Fatalf("rollback_to version 1 without a backup = %v", rb)
	}
	if n := e.note("demo/tasks/auth-flow.md"); prop(n, "status") != "pending" || strings.Contains(n, "schema") || e.git("tag", "--list", "checkpoint/*") != tags {
		t.Fatalf("the task note after rollback_to version 1 (no backup tag expected):\n%s", n)
	}
	// Rolling back to what the note already holds changes nothing.
	head = e.headCommit()
	if same := e.ok("rollback_to", map[string]any{"task_id": "auth-flow", "target": map[string]any{"type": "version", "version": 1}, "create_backup": false}); len(list(same["restored"])) != 0 || e.headCommit() != head {
		t.Fatalf("a rollback to the current content = %v", same)
	}
	e.fail("rollback_to", map[string]any{"task_id": "auth-flow", "target": map[string]any{"type": "version", "version": 99}}, "E1623 VERSION_NOT_FOUND")
	e.fail("rollback_to", map[string]any{"task_id": "auth-flow", "target": map[string]any{"type": "checkpoint", "checkpoint_id": "cp-nope"}}, "E1622 CHECKPOINT_NOT_FOUND")
	text := e.fail("rollback_to", map[string]any{"task_id": "auth-flow", "target": map[string]any{"type": "banana"}}, "E1612 UPDATE_VALIDATION_FAILED")
	if !strings.Contains(text, `target.type "banana" is not version or checkpoint`) {
		t.Fatalf("rollback_to with a bad target type:\n%s", text)
	}

	// The task's context, its relationships and version history.
	uc := e.ok("get_unified_context", map[string]any{"task_id": "auth-flow", "include_version_history": true, "max_versions": 3})
	hist := list(uc["version_history"])
	if obj(uc["task"])["status"] != "pending" || len(hist) != 3 || obj(hist[2])["change_type"] != "recovery" || obj(uc["global"])["active_task"] != "auth-flow" {
		t.Fatalf("get_unified_context with a task = %v", uc)
	}
	rel := obj(e.ok("get_unified_context", map[string]any{"task_id": "login"})["relationships"])
	if deps := list(rel["depends_on"]); len(deps) != 1 || obj(deps[0])["task_id"] != "auth-flow" {
		t.Fatalf("get_unified_context of login: relationships = %v", rel)
	}
	if norel := e.ok("get_unified_context", map[string]any{"task_id": "login", "include_relationships": false}); norel["relationships"] != nil {
		t.Fatalf("get_unified_context include_relationships false = %v", norel["relationships"])
	}
	e.fail("get_unified_context", map[string]any{"task_id": "nope"}, "E1610 TASK_NOT_FOUND")

	// Lists are replaced when given, emptied when given empty, kept when
	// left out.
	e.ok("save_context_snapshot", map[string]any{"task_id": "login", "updates": map[string]any{"locked_elements": []string{"db"}, "key_files": []string{"login.go"}}})
	e.ok("save_context_snapshot", map[string]any{"task_id": "login", "updates": map[string]any{"locked_elements": []string{}}})
	if n := e.note("demo/tasks/login.md"); !strings.Contains(n, "\nlocked_elements: []\n") || !strings.Contains(n, "\nkey_files:\n  - login.go\n") {
		t.Fatalf("login after emptying its locked elements:\n%s", n)
	}
	e.clean()
}

// detect_conflicts finds two active tasks sharing key files, records the
// conflict in conflicts.md once (a second detection finds it existing and
// commits nothing), and resolve_conflict resolves it; the errors carry
// their codes.
func TestConflictTools(t *testing.T) {
	e := newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Conflicts"})
	for _, name := range []string{"Auth flow", "Login page"} {
		e.ok("create_task", map[string]any{"name": name, "key_files": []string{"auth.go", "session.go"}})
		e.ok("save_context_snapshot", map[string]any{"task_id": strings.ToLower(strings.ReplaceAll(name, " ", "-")), "updates": map[string]any{"status": "in_progress"}})
	}
	e.fail("detect_conflicts", map[string]any{"conflict_types": []string{"bogus"}}, "E1645 INVALID_CONFLICT_TYPE")

	det := e.ok("detect_conflicts", map[string]any{"conflict_types": []string{"file_conflict"}})
	found := list(det["detected"])
	if len(found) != 1 || obj(found[0])["conflict_type"] != "file_conflict" || obj(found[0])["id"] != "cf-1" || obj(det["summary"])["new_conflicts"] != float64(1) {
		t.Fatalf("detect_conflicts = %v", det)
	}
	c := obj(found[0])
	if !slices.Equal([]any{c["task_a_id"], c["task_b_id"]}, []any{"auth-flow", "login-page"}) {
		t.Fatalf("the conflict's tasks = %v", c)
	}
	if n := e.note("demo/conflicts.md"); !strings.Contains(n, "- [ ] cf-1 · ") || !strings.Contains(n, "[[demo/tasks/auth-flow|auth-flow]] ↔ [[demo/tasks/login-page|login-page]]") {
		t.Fatalf("conflicts.md:\n%s", n)
	}
	head := e.headCommit()
	again := e.ok("detect_conflicts", map[string]any{"task_ids": []string{"auth-flow", "login-page"}})
	if len(list(again["detected"])) != 0 || len(list(again["existing"])) != 1 || e.headCommit() != head {
		t.Fatalf("a second detect_conflicts = %v", again)
	}

	res := e.ok("resolve_conflict", map[string]any{"conflict_id": "cf-1", "action": "custom", "resolved_value": "split the files", "notes": "agreed", "resolved_by": "ana"})
	if res["success"] != true || res["new_status"] != "resolved" || res["previous_status"] != "unresolved" {
		t.Fatalf("resolve_conflict = %v", res)
	}
	if n := e.note("demo/conflicts.md"); !strings.Contains(n, "- [x] cf-1 · ") || !strings.Contains(n, "by ana, value: split the files: agreed") {
		t.Fatalf("conflicts.md after the resolution:\n%s", n)
	}
	e.fail("resolve_conflict", map[string]any{"conflict_id": "cf-1", "action": "ignore"}, "E1643 CONFLICT_ALREADY_RESOLVED")
	e.fail("resolve_conflict", map[string]any{"conflict_id": "cf-9", "action": "ignore"}, "E1642 CONFLICT_NOT_FOUND")
	e.fail("resolve_conflict", map[string]any{"conflict_id": "cf-1", "action": "bogus"}, "E1612 UPDATE_VALIDATION_FAILED")
	e.clean()
}

// get_task_graph reads the graph from the task notes' links: typed edges,
// ready and blocked tasks, a focus on one task; sync_hot_context reports
// the task contexts and the active task and commits nothing when the
// derived notes are current.
func TestTaskGraphAndHotContext(t *testing.T) {
	e := newEnv(t)
	e.ok("create_task", map[string]any{"name": "Schema"})
	e.ok("create_task", map[string]any{"name": "API", "depends_on": []string{"schema"}})
	e.ok("create_task", map[string]any{"name": "UI", "depends_on": []string{"api"}, "related_to": []string{"schema"}})

	g := e.ok("get_task_graph", nil)
	ids := func(v any) []string {
		var out []string
		for _, n := range list(v) {
			out = append(out, fmt.Sprint(obj(n)["task_id"]))
		}
		slices.Sort(out)
		return out
	}
	if got := ids(g["nodes"]); !slices.Equal(got, []string{"api", "schema", "ui"}) {
		t.Fatalf("get_task_graph nodes = %v", got)
	}
	if got := idList(g["ready_tasks"]); !slices.Equal(got, []string{"schema"}) {
		t.Fatalf("get_task_graph ready_tasks = %v", got)
	}
	if obj(g["summary"])["total_tasks"] != float64(3) {
		t.Fatalf("get_task_graph summary = %v", g["summary"])
	}
	var edges []string
	for _, ed := range list(g["edges"]) {
		edges = append(edges, fmt.Sprintf("%v %v %v", obj(ed)["from"], obj(ed)["type"], obj(ed)["to"]))
	}
	slices.Sort(edges)
	if want := []string{"api depends_on schema", "ui depends_on api", "ui related_to schema"}; !slices.Equal(edges, want) {
		t.Fatalf("get_task_graph edges = %q, want %q", edges, want)
	}
	focus := obj(e.ok("get_task_graph", map[string]any{"task_id": "api", "depth": 1, "include_completed": true})["focus"])
	if obj(focus["task"])["task_id"] != "api" || !slices.Equal(ids(focus["depends_on"]), []string{"schema"}) || !slices.Equal(ids(focus["dependency_of"]), []string{"ui"}) {
		t.Fatalf("get_task_graph focus on api = %v", focus)
	}
	e.fail("get_task_graph", map[string]any{"task_id": "nope"}, "E1610 TASK_NOT_FOUND")

	// A completed task leaves the graph unless include_completed.
	e.ok("save_context_snapshot", map[string]any{"task_id": "schema", "updates": map[string]any{"status": "completed"}})
	if got := ids(e.ok("get_task_graph", nil)["nodes"]); !slices.Equal(got, []string{"api", "ui"}) {
		t.Fatalf("get_task_graph nodes with schema completed = %v", got)
	}
	if got := ids(e.ok("get_task_graph", map[string]any{"include_completed": true})["nodes"]); !slices.Equal(got, []string{"api", "schema", "ui"}) {
		t.Fatalf("get_task_graph include_completed nodes = %v", got)
	}

	e.ok("switch_task", map[string]any{"to_task_id": "api"})
	head := e.headCommit()
	hot := e.ok("sync_hot_context", nil)
	if hot["success"] != true || hot["active_task"] != "api" || hot["task_contexts"] != float64(2) || len(list(hot["errors"])) != 0 {
		t.Fatalf("sync_hot_context = %v", hot)
	}
	if only := e.ok("sync_hot_context", map[string]any{"task_ids": []string{"api"}}); only["task_contexts"] != float64(1) {
		t.Fatalf("sync_hot_context of one task = %v", only)
	}
	if e.headCommit() != head {
		t.Fatalf("sync_hot_context with current notes committed %q", e.subjects(head))
	}
	e.clean()
}
