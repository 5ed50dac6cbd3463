package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/testenv"
)

// The task graph figures and the MCP tool calls through a running server
// are measured on a small vault with the built binary, and every figure
// they print is in the report.
func TestTaskGraphAndMCPCallFigures(t *testing.T) {
	tmp := t.TempDir()
	// Built before HOME moves, with the go build cache of the machine.
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go tool on PATH to build sessionvault: %v", err)
	}
	bin := filepath.Join(tmp, "sessionvault")
	build := exec.Command(gotool, "build", "-o", bin, "../sessionvault")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	testenv.Home(t, tmp)
	work := filepath.Join(tmp, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	o := options{bin: bin, graphTasks: 12, rounds: 3}
	var figs figures
	if err := taskGraphFigure(o, work, &figs); err != nil {
		t.Fatal(err)
	}
	if err := mcpCallFigures(o, work, &figs); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range figs.list {
		got[f.Name] = f.Value
	}
	for _, name := range []string{"task-graph/p50", "task-graph/p99", "task-graph-cached/p50", "task-graph-cached/p99",
		"mcp/session-update/p50", "mcp/session-update/p90", "mcp/task-graph/p50", "mcp/task-graph/p90", "mcp/task-graph-raw/p50", "mcp/task-graph-raw/p90"} {
		if v, ok := got[name]; !ok || v <= 0 {
			t.Errorf("figure %s = %v (recorded: %v)", name, v, ok)
		}
	}
	// The session the MCP calls ran in holds their updates.
	note, err := os.ReadFile(filepath.Join(taskVaultDir(work), benchProject, "session-current-state.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(note), "step 2") {
		t.Errorf("the session's note does not hold the timed updates:\n%s", note)
	}
}
