package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// What Files writes, ReadAISession reads back as the same folder: written
// again, every file is byte-identical (nulls, empty lists, quotes, unicode,
// tabs and newlines in values included).
func TestAISessionFilesRoundTrip(t *testing.T) {
	t0 := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	d := int64(5234)
	a := AISession{Features: []AIFeature{
		{ID: "zeta-2025-02-01", Name: "Zeta", Status: "completed", StartedAt: &t0, CreatedAt: &t0, LastActive: &t1},
		{ID: "ai-orchestrator-2025-01-09", Name: `AI "orchestrator" — é`, Description: "a: b # c", Status: "active", CreatedAt: &t0, StartedAt: &t0, LastActive: &t1,
			Phases: []AIPhase{
				{ID: "core", Name: "Core", Tasks: []AITask{
					{TaskID: "impl", Description: "Implement", Agent: "opus", Status: "in_progress", StartedAt: &t0, Artifacts: []string{"a.go", "docs/b c.md"}},
					{TaskID: "docs", Description: "Docs", Status: "pending", Artifacts: []string{}},
				}},
				{ID: "empty", Name: "Empty", Tasks: nil},
			},
			History: []AIHistoryEntry{
				{Timestamp: t0, Command: "plan", Arguments: "Create\tit\n<now>", Model: "gemini", Agent: "agent-1", Status: "success", DurationMs: &d},
				{Timestamp: t1, Command: "make lint && echo ok", Status: "failure", Error: "exit 2", TaskID: "impl"},
			}},
	}}
	files := a.Files()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	back, skipped, err := ReadAISession(dir)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("read back: %v %v", err, skipped)
	}
	again := back.Files()
	if !reflect.DeepEqual(again, files) {
		for name := range files {
			if string(again[name]) != string(files[name]) {
				t.Errorf("%s differs after a round trip:\n%s\nwant\n%s", name, again[name], files[name])
			}
		}
		t.Fatal("the files differ")
	}
	if !strings.HasPrefix(string(files["active-features.yaml"]), "active_features:\n  - feature_id: \"ai-orchestrator-2025-01-09\"\n") {
		t.Errorf("features are not sorted by id:\n%s", files["active-features.yaml"])
	}
	if got := string(files["ai-orchestrator-2025-01-09/history.jsonl"]); !strings.HasPrefix(got, `{"timestamp":"2025-01-09T10:00:00Z","command":"plan","arguments":"Create\tit\n<now>","model":"gemini","agent":"agent-1","task_id":null,"status":"success","duration_ms":5234}`+"\n") {
		t.Errorf("history.jsonl:\n%s", got)
	}
}

// An empty folder is an empty session; a missing one is an error.
func TestReadAISessionEmptyAndMissing(t *testing.T) {
	a, skipped, err := ReadAISession(t.TempDir())
	if err != nil || len(a.Features) != 0 || len(skipped) != 0 {
		t.Fatalf("empty folder: %v %v %v", a, skipped, err)
	}
	if _, _, err := ReadAISession(filepath.Join(t.TempDir(), "nope")); !os.IsNotExist(err) {
		t.Fatalf("missing folder: %v", err)
	}
	if got := string((AISession{}).Files()["active-features.yaml"]); got != "active_features: []\n" {
		t.Errorf("no features: %q", got)
	}
}
