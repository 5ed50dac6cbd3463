package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every task orchestration tool (taskOrchestrationTools) is listed by tools/list with
// input and output schemas.
func TestMCPHasTaskOrchestrationTools(t *testing.T) {
	t.Parallel()
	cs := inMemory(t, newVault(t))
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tl := range tools.Tools {
		have[tl.Name] = tl.InputSchema != nil && tl.OutputSchema != nil
	}
	for _, name := range taskOrchestrationTools {
		if !have[name] {
			t.Errorf("tools/list has no %s with input and output schemas", name)
		}
	}
}

// The task orchestration tools through a real MCP client: the same notes,
// commits and answers as the CLI verbs, and the E16xx error codes.
func TestMCPTaskOrchestrationTools(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	cs := inMemory(t, v)
	mustCall(t, cs, "session_start", map[string]any{"objective": "orchestration over MCP"})
	shared := []string{"a.go", "b.go", "c.go"}
	if out := mustCall(t, cs, "create_task", map[string]any{"name": "Auth flow", "key_files": shared}); out["task_id"] != "auth-flow" {
		t.Fatalf("create_task = %v", out)
	}
	mustCall(t, cs, "create_task", map[string]any{"name": "Login page", "key_files": shared, "depends_on": []string{"auth-flow"}})

	save := mustCall(t, cs, "save_context_snapshot", map[string]any{"task_id": "auth-flow", "change_summary": "designed",
		"updates": map[string]any{"current_phase": "design", "iteration": 2, "immediate_context": map[string]any{"working_on": "schema", "blockers": []string{"keys"}}}})
	if save["version"] != float64(2) || save["success"] != true {
		t.Fatalf("save_context_snapshot = %v", save)
	}
	note, _ := os.ReadFile(filepath.Join(v, "demo", "tasks", "auth-flow.md"))
	if !strings.Contains(string(note), "- **Working on:** schema\n") || !strings.Contains(string(note), "- **Blockers:** keys\n") {
		t.Fatalf("the note does not hold the saved context:\n%s", note)
	}
	if _, isErr, text := call(t, cs, "save_context_snapshot", map[string]any{"task_id": "nope"}); !isErr || !strings.Contains(text, "E1610 TASK_NOT_FOUND") {
		t.Fatalf("save of a missing task: %v %s", isErr, text)
	}

	cp := mustCall(t, cs, "create_checkpoint", map[string]any{"label": "designed", "task_id": "auth-flow"})
	if cp["scope"] != "task" || !strings.HasPrefix(fmt.Sprint(cp["checkpoint_id"]), "cp-") {
		t.Fatalf("create_checkpoint = %v", cp)
	}
	if multi := mustCall(t, cs, "create_checkpoint", map[string]any{"label": "both", "task_id": "auth-flow", "include_tasks": []string{"login-page"}}); multi["scope"] != "multi_task" {
		t.Fatalf("multi_task checkpoint = %v", multi)
	}
	if g := mustCall(t, cs, "create_checkpoint", map[string]any{"label": "all"}); g["scope"] != "global" {
		t.Fatalf("global checkpoint = %v", g)
	}
	atCheckpoint, _ := os.ReadFile(filepath.Join(v, "demo", "tasks", "auth-flow.md"))

	sw := mustCall(t, cs, "switch_task", map[string]any{"from_task_id": "auth-flow", "to_task_id": "login-page",
		"current_task_updates": map[string]any{"current_phase": "paused"}})
	prev, _ := sw["previous_task"].(map[string]any)
	newTask, _ := sw["new_task"].(map[string]any)
	if prev["saved"] != true || prev["version"] != float64(3) || newTask["status"] != "in_progress" {
		t.Fatalf("switch_task = %v", sw)
	}
	if blocked, _ := sw["blocked_by"].([]any); len(blocked) != 1 {
		t.Fatalf("switch_task blocked_by = %v", sw["blocked_by"])
	}

	rb := mustCall(t, cs, "rollback_to", map[string]any{"task_id": "auth-flow", "target": map[string]any{"type": "checkpoint", "checkpoint_id": cp["checkpoint_id"]}})
	if rb["backup_checkpoint_id"] == "" || rb["success"] != true {
		t.Fatalf("rollback_to = %v", rb)
	}
	if now, _ := os.ReadFile(filepath.Join(v, "demo", "tasks", "auth-flow.md")); string(now) != string(atCheckpoint) {
		t.Fatalf("rollback_to did not restore the note:\n%s\nwant\n%s", now, atCheckpoint)
	}
	if _, isErr, text := call(t, cs, "rollback_to", map[string]any{"task_id": "auth-flow", "target": map[string]any{"type": "version", "version": 99}}); !isErr || !strings.Contains(text, "E1623 VERSION_NOT_FOUND") {
		t.Fatalf("rollback to a missing version: %v %s", isErr, text)
	}

	uc := mustCall(t, cs, "get_unified_context", map[string]any{"task_id": "auth-flow", "include_version_history": true, "max_versions": 3})
	task, _ := uc["task"].(map[string]any)
	hist, _ := uc["version_history"].([]any)
	if task["current_phase"] != "design" || len(hist) != 3 || uc["prompt"] == "" {
		t.Fatalf("get_unified_context = %v", uc)
	}
	if last := hist[2].(map[string]any); last["change_type"] != "recovery" {
		t.Fatalf("the rollback's version is %v", last)
	}

	det := mustCall(t, cs, "detect_conflicts", map[string]any{"conflict_types": []string{"file_conflict"}})
	found, _ := det["detected"].([]any)
	if len(found) != 1 || found[0].(map[string]any)["severity"] != "high" || found[0].(map[string]any)["strength"] != 0.6 {
		t.Fatalf("detect_conflicts = %v", det)
	}
	id := found[0].(map[string]any)["id"]
	if r := mustCall(t, cs, "resolve_conflict", map[string]any{"conflict_id": id, "action": "ignore"}); r["new_status"] != "ignored" {
		t.Fatalf("resolve_conflict = %v", r)
	}
	if again := mustCall(t, cs, "detect_conflicts", map[string]any{}); again["summary"].(map[string]any)["new_conflicts"] != float64(0) {
		t.Fatalf("second detect_conflicts = %v", again)
	}

	g := mustCall(t, cs, "get_task_graph", map[string]any{})
	ready, _ := g["ready_tasks"].([]any)
	if len(ready) != 1 || ready[0] != "auth-flow" || g["summary"].(map[string]any)["total_tasks"] != float64(2) {
		t.Fatalf("get_task_graph = %v", g)
	}
	hot := mustCall(t, cs, "sync_hot_context", map[string]any{})
	if hot["success"] != true || hot["active_task"] != "login-page" || hot["task_contexts"] != float64(2) {
		t.Fatalf("sync_hot_context = %v", hot)
	}
	rec := mustCall(t, cs, "check_recovery", map[string]any{"include_history": true})
	if rec["needs_recovery"] != false {
		b, _ := json.Marshal(rec)
		t.Fatalf("check_recovery = %s", b)
	}
	assertClean(t, v)
}
