package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The feature tools through a real MCP client: the same notes,
// commits and errors as `sessionvault feature ...`.
func TestMCPFeatureTools(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	cs := inMemory(t, v)
	mustCall(t, cs, "session_start", map[string]any{"objective": "features over MCP"})
	mustRun(t, v, "task", "new", "Implement core", "--id", "impl-core")

	if _, isErr, text := call(t, cs, "create_feature", map[string]any{"name": "X", "feature_id": "Not_An_Id"}); !isErr || !strings.Contains(text, "E1670 INVALID_FEATURE_ID") {
		t.Fatalf("create_feature with a bad id: %v %s", isErr, text)
	}
	out := mustCall(t, cs, "create_feature", map[string]any{"name": "AI orchestrator", "feature_id": "ai-orchestrator-2025-01-09", "description": "Build it"})
	if out["feature_id"] != "ai-orchestrator-2025-01-09" || out["note"] != "demo/features/ai-orchestrator-2025-01-09.md" || out["session"] == "" || out["commit"] == "" {
		t.Fatalf("create_feature = %v", out)
	}
	if st := frontMatter(t, filepath.Join(v, "demo", "session-current-state.md")); st["active_feature"] != "[[demo/features/ai-orchestrator-2025-01-09|ai-orchestrator-2025-01-09]]" {
		t.Fatalf("active_feature = %q", st["active_feature"])
	}

	plan := mustCall(t, cs, "update_feature_plan", map[string]any{"feature_id": "ai-orchestrator-2025-01-09", "phase": "Core", "task_id": "impl-core",
		"description": "Implement the core commands", "agent": "opus", "status": "in_progress", "started_at": "2025-01-09T10:00:00Z", "artifacts": []string{"cmd/main.go"}})
	f, _ := plan["feature"].(map[string]any)
	phases, _ := f["phases"].([]any)
	if len(phases) != 1 {
		t.Fatalf("update_feature_plan = %v", plan)
	}
	task := phases[0].(map[string]any)["tasks"].([]any)[0].(map[string]any)
	if task["status"] != "in_progress" || task["started_at"] != "2025-01-09T10:00:00Z" || task["task_note"] != "demo/tasks/impl-core" {
		t.Fatalf("the planned task = %v", task)
	}
	data, _ := os.ReadFile(filepath.Join(v, "demo", "features", "ai-orchestrator-2025-01-09.md"))
	if !strings.Contains(string(data), "- [ ] [[demo/tasks/impl-core|impl-core]] · Implement the core commands · **agent:** opus · **status:** in_progress · **started:** 2025-01-09T10:00:00Z · **artifacts:** `cmd/main.go` ^t-1\n") {
		t.Fatalf("the note does not hold the task line:\n%s", data)
	}
	if _, isErr, text := call(t, cs, "update_feature_plan", map[string]any{"feature_id": "ai-orchestrator-2025-01-09", "task_id": "impl-core", "status": "done"}); !isErr || !strings.Contains(text, "E1674 PLAN_VALIDATION_FAILED") {
		t.Fatalf("a bad status: %v %s", isErr, text)
	}
	if _, isErr, text := call(t, cs, "get_feature", map[string]any{"feature_id": "nope-2025-01-09"}); !isErr || !strings.Contains(text, "E1671 FEATURE_NOT_FOUND") || !strings.Contains(text, "list_features") {
		t.Fatalf("a missing feature: %v %s", isErr, text)
	}
	if got := mustCall(t, cs, "get_feature", map[string]any{"feature_id": "ai-orchestrator-2025-01-09"}); got["description"] != "Build it" {
		t.Fatalf("get_feature = %v", got)
	}

	mustCall(t, cs, "create_feature", map[string]any{"name": "Docs", "feature_id": "docs-2025-01-09"})
	mustCall(t, cs, "set_feature_status", map[string]any{"feature_id": "ai-orchestrator-2025-01-09", "status": "paused"})
	list := mustCall(t, cs, "list_features", map[string]any{"status": "active"})
	if fs, _ := list["features"].([]any); len(fs) != 1 || fs[0].(map[string]any)["feature_id"] != "docs-2025-01-09" || list["active_feature"] != "docs-2025-01-09" {
		t.Fatalf("list_features active = %v", list)
	}
	sw := mustCall(t, cs, "switch_feature", map[string]any{"feature_id": "ai-orchestrator-2025-01-09"})
	if sw["feature"].(map[string]any)["status"] != "active" {
		t.Fatalf("switch_feature = %v", sw)
	}
	mustCall(t, cs, "set_feature_status", map[string]any{"feature_id": "ai-orchestrator-2025-01-09", "status": "completed"})
	if _, isErr, text := call(t, cs, "set_feature_status", map[string]any{"feature_id": "ai-orchestrator-2025-01-09", "status": "paused"}); !isErr || !strings.Contains(text, "E1673 INVALID_FEATURE_TRANSITION") || !strings.Contains(text, "set_feature_status") {
		t.Fatalf("completed to paused: %v %s", isErr, text)
	}
	if all := mustCall(t, cs, "list_features", nil); len(all["features"].([]any)) != 2 || all["active_feature"] != nil {
		t.Fatalf("list_features = %v", all)
	}
	assertClean(t, v)
}

// The command history through a real MCP client: record_command appends to
// the active session's log and commits it; get_command_history reads it
// back, filtered by feature; an entry older than the log's last one gets
// the last one's time.
func TestMCPCommandHistory(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	cs := inMemory(t, v)
	if _, isErr, text := call(t, cs, "record_command", map[string]any{"command": "make test"}); !isErr || !strings.Contains(text, "E1602 NO_ACTIVE_SESSION") {
		t.Fatalf("record_command with no session: %v %s", isErr, text)
	}
	mustCall(t, cs, "session_start", map[string]any{"objective": "history over MCP"})
	mustCall(t, cs, "create_feature", map[string]any{"name": "Orchestrator", "feature_id": "orch-2025-01-09"})
	first := mustCall(t, cs, "record_command", map[string]any{"command": "make test", "arguments": "-j4", "model": "gemini", "agent": "agent-1",
		"duration_ms": 5234, "timestamp": "2099-01-01T00:00:00Z"})
	entry, _ := first["entry"].(map[string]any)
	if entry["id"] != "h-1" || entry["feature_id"] != "orch-2025-01-09" || first["commit"] == "" {
		t.Fatalf("record_command = %v", first)
	}
	second := mustCall(t, cs, "record_command", map[string]any{"command": "make lint", "status": "failure", "error": "exit 2", "feature_id": "-"})
	if second["clamped"] != true || second["entry"].(map[string]any)["timestamp"] != "2099-01-01T00:00:00Z" {
		t.Fatalf("an entry older than the last one = %v", second)
	}
	if _, isErr, text := call(t, cs, "record_command", map[string]any{"command": "x", "status": "maybe"}); !isErr || !strings.Contains(text, "E1675 HISTORY_ENTRY_INVALID") {
		t.Fatalf("a bad status: %v %s", isErr, text)
	}
	h := mustCall(t, cs, "get_command_history", map[string]any{"feature_id": "orch-2025-01-09"})
	entries, _ := h["entries"].([]any)
	if len(entries) != 1 || entries[0].(map[string]any)["command"] != "make test" || entries[0].(map[string]any)["duration_ms"] != float64(5234) {
		t.Fatalf("get_command_history = %v", h)
	}
	if all := mustCall(t, cs, "get_command_history", nil); len(all["entries"].([]any)) != 2 {
		t.Fatalf("get_command_history = %v", all)
	}
	assertClean(t, v)
}
