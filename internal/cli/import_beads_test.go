package cli

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// beadsGen writes a .beads/issues.jsonl of n issues under dir (fixed seed):
// epics with children, blocks on earlier issues and on epics, every status.
// It returns the ids bd ready lists for it, computed from the issues as
// generated: open or in progress, no blocks dependency on an issue that is
// open, in progress, blocked or deferred, no such blocked ancestor.
func beadsGen(t *testing.T, dir string, n int) []string {
	t.Helper()
	r := rand.New(rand.NewSource(7))
	statuses := []string{"open", "open", "open", "in_progress", "blocked", "deferred", "closed", "closed", "tombstone"}
	status := map[string]string{}
	blockers := map[string][]string{}
	parent := map[string]string{}
	var ids, epics, lines []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("cli-%d", i)
		var deps []string
		dep := func(to, typ string) {
			deps = append(deps, fmt.Sprintf(`{"issue_id":%q,"depends_on_id":%q,"type":%q,"created_at":"2025-10-01T09:00:00Z","created_by":"t"}`, id, to, typ))
		}
		if len(epics) > 0 && r.Intn(3) == 0 {
			parent[id] = epics[r.Intn(len(epics))]
			dep(parent[id], "parent-child")
		}
		seen := map[string]bool{}
		for k := 0; i > 0 && k < r.Intn(3); k++ {
			if to := ids[r.Intn(len(ids))]; !seen[to] {
				seen[to] = true
				blockers[id] = append(blockers[id], to)
				dep(to, "blocks")
			}
		}
		typ := "task"
		if r.Intn(6) == 0 {
			typ = "epic"
			epics = append(epics, id)
		}
		status[id] = statuses[r.Intn(len(statuses))]
		lines = append(lines, fmt.Sprintf(`{"id":%q,"title":"Issue %d","description":"Text %d.","status":%q,"priority":%d,"issue_type":%q,"labels":["gen"],"created_at":"2025-10-01T09:00:00Z","updated_at":"2025-10-01T09:00:00Z","dependencies":[%s]}`,
			id, i, i, status[id], r.Intn(5), typ, strings.Join(deps, ",")))
		ids = append(ids, id)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".beads"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".beads", "issues.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{"open": true, "in_progress": true, "blocked": true, "deferred": true}
	var blocked func(id string, depth int) bool
	blocked = func(id string, depth int) bool {
		for _, b := range blockers[id] {
			if open[status[b]] {
				return true
			}
		}
		p, ok := parent[id]
		return ok && depth < 50 && blocked(p, depth+1)
	}
	var ready []string
	for _, id := range ids {
		if (status[id] == "open" || status[id] == "in_progress") && !blocked(id, 0) {
			ready = append(ready, id)
		}
	}
	sort.Strings(ready)
	return ready
}

// `import beads` on a repository of 300 generated issues: progress on
// stderr, every issue a task, `task graph --json`'s ready tasks are bd
// ready's, a second run finds all 300 unchanged.
func TestImportBeadsReadyWork(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	repo := filepath.Join(t.TempDir(), "shop")
	want := beadsGen(t, repo, 300)
	out, errOut, code := run(t, v, "import", "beads", repo)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, p := range []string{"beads issues: 100/300\n", "beads issues: 200/300\n", "beads issues: 300/300\n"} {
		if !strings.Contains(errOut, p) {
			t.Errorf("stderr lacks %q:\n%s", p, errOut)
		}
	}
	if !strings.Contains(out, ": 300 issues, 300 tasks created, 0 updated, 0 unchanged, 0 skipped") {
		t.Errorf("stdout:\n%s", out)
	}
	var g struct {
		Data struct {
			Nodes []struct {
				ID string `json:"task_id"`
			} `json:"nodes"`
			Ready []string `json:"ready_tasks"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, v, "task", "graph", "--include-completed", "--json")), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Data.Nodes) != 300 {
		t.Errorf("%d tasks in the graph, want 300", len(g.Data.Nodes))
	}
	got := g.Data.Ready
	sort.Strings(got)
	if !slices.Equal(got, want) || len(want) < 20 {
		t.Errorf("task graph ready (%d) = %v\nbd ready (%d) = %v", len(got), got, len(want), want)
	}
	var again struct {
		Data struct {
			Report struct{ Created, Updated, Unchanged int } `json:"report"`
			Git    struct{ Commit string }                   `json:"git"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, v, "import", "beads", filepath.Join(repo, ".beads"), "--json")), &again); err != nil {
		t.Fatal(err)
	}
	if r := again.Data.Report; r.Unchanged != 300 || r.Created+r.Updated != 0 || again.Data.Git.Commit != "" {
		t.Errorf("second run: %+v", again.Data)
	}
}

// A run that imports none of the issues it found fails (E1653) with the
// reasons counted by kind, in --json too; a file that is not beads' is
// E1656.
func TestImportBeadsNoneImported(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "task", "new", "Mine", "--id", "x-1")
	file := filepath.Join(t.TempDir(), "issues.jsonl")
	os.WriteFile(file, []byte(`{"id":"x-1","title":"Theirs","status":"open"}`+"\nnot json\n"), 0o644)
	out, _, code := run(t, v, "import", "beads", file, "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	var e struct {
		Error struct {
			Name    string
			Message string
			Details struct {
				ByReason map[string]int `json:"by_reason"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if e.Error.Name != "IMPORT_FAILED" || !strings.Contains(e.Error.Message, "none of the 2 beads issues in "+file+" was imported") || len(e.Error.Details.ByReason) != 2 {
		t.Errorf("error = %+v", e.Error)
	}
	os.WriteFile(file, []byte("# not beads\n"), 0o644)
	if out, _, code := run(t, v, "import", "beads", file, "--json"); code != 1 || !strings.Contains(out, "IMPORT_FORMAT_UNKNOWN") {
		t.Errorf("not beads: exit %d\n%s", code, out)
	}
}
