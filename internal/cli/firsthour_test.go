package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// statusJSON returns `status --json`'s data.
func statusJSON(t *testing.T, v string) map[string]any {
	t.Helper()
	var res struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, v, "status", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	return res.Data
}

// `start --force` after `recover` marks the old session abandoned and
// starts a complete new one: its checklists, no idle text left behind.
func TestStartForceAfterRecoverStartsACompleteSession(t *testing.T) {
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "One")
	mustRun(t, v, "update", "something")
	mustRun(t, v, "recover", "--force")
	mustRun(t, v, "start", "--objective", "Two", "--force")
	st := statusJSON(t, v)
	if st["objective"] != "Two" || st["status"] != "active" {
		t.Fatalf("status = %v", st)
	}
	if cl, _ := st["start_checklist"].([]any); len(cl) == 0 {
		t.Errorf("the new session has no start checklist")
	}
	note, _ := os.ReadFile(filepath.Join(v, "demo", "session-current-state.md"))
	if strings.Contains(string(note), "No active session") {
		t.Errorf("the idle text stayed in the new session:\n%s", note)
	}
	archived, err := os.ReadFile(filepath.Join(v, "demo", "sessions", "2026-11-23-session-01.md"))
	if err != nil {
		matches, _ := filepath.Glob(filepath.Join(v, "demo", "sessions", "*.md"))
		if len(matches) != 1 {
			t.Fatalf("archived sessions: %v", matches)
		}
		archived, _ = os.ReadFile(matches[0])
	}
	if !strings.Contains(string(archived), "status: abandoned") {
		t.Errorf("the old session is not marked abandoned:\n%s", archived)
	}
	assertClean(t, v)
}

// A new session starts in the vault's default mode: the last session's mode,
// even a person's disabled, does not carry over.
func TestNewSessionStartsInDefaultMode(t *testing.T) {
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "One")
	mustRun(t, v, "mode", "set", "disabled")
	mustRun(t, v, "end", "--summary", "done")
	mustRun(t, v, "start", "--objective", "Two")
	if m := statusJSON(t, v)["mode"]; m != "coding" {
		t.Errorf("mode of the new session = %v, want coding (default_mode)", m)
	}
}
