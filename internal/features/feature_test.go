package features

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sessionvault/sessionvault/internal/errs"
)

func TestCheckFeatureID(t *testing.T) {
	for id, ok := range map[string]bool{
		"ai-orchestrator-2025-01-09": true, "x-2025-12-31": true, "v2-api-2024-02-29": true,
		"AI-2025-01-09": false, "ai_orch-2025-01-09": false, "ai--x-2025-01-09": false, "ai-2025-1-9": false,
		"ai-2025-02-30": false, "-2025-01-09": false, "2025-01-09": false, "ai-orchestrator": false,
		strings.Repeat("a", 90) + "-2025-01-09": false,
	} {
		err := CheckFeatureID("id", id)
		if (err == nil) != ok {
			t.Errorf("CheckFeatureID(%q) = %v, want ok %v", id, err, ok)
		}
		if err != nil && (!errs.Is(err, errs.InvalidFeatureId) || !strings.Contains(err.Error(), "--id")) {
			t.Errorf("CheckFeatureID(%q): %v, want E1670 naming --id", id, err)
		}
	}
}

// A task line the engine writes reads back as the same task, whatever its
// fields; the box follows the status.
func TestPlanTaskLineRoundTrip(t *testing.T) {
	t1 := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	t2 := t1.Add(90 * time.Minute)
	for _, c := range []struct {
		task PlanTask
		note string
	}{
		{PlanTask{TaskID: "impl-core", Description: "Implement · the core", Agent: "opus", Status: session.TaskInProgress, StartedAt: &t1, Artifacts: []string{}, BlockID: "t-1"}, "demo/tasks/impl-core"},
		{PlanTask{TaskID: "docs_v2.1", Description: "Docs with **bold** and [[links]]", Status: session.TaskCompleted, StartedAt: &t1, CompletedAt: &t2, Artifacts: []string{"README.md", "docs/a b.md"}, BlockID: "t-12-laptop"}, ""},
		{PlanTask{TaskID: "x", Description: "", Status: session.TaskBlocked, Agent: "plugin:reviewer@1", Artifacts: []string{}, BlockID: "t-3"}, ""},
	} {
		line := formatPlanTask(c.task, c.note)
		got, why := parsePlanTask(line, time.UTC)
		if why != "" {
			t.Fatalf("%s: %s", line, why)
		}
		got.TaskNote, c.task.TaskNote = "", ""
		if !reflectEqualTask(got, c.task) || got.TaskID != c.task.TaskID || got.BlockID != c.task.BlockID {
			t.Errorf("%s\nread back as %+v\nwant %+v", line, got, c.task)
		}
		if ticked := strings.HasPrefix(line, "- [x] "); ticked != (c.task.Status == session.TaskCompleted) {
			t.Errorf("%s: box does not follow status %s", line, c.task.Status)
		}
	}
}

// Changing one task rewrites its line only: every other byte of the note —
// CRLF line endings, a person's section, property and comments — stays.
func TestUpdatePlanChangesOnlyItsLine(t *testing.T) {
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.FeatureNew(NewFeatureOptions{Project: "demo", Name: "Orchestrator", ID: "orch-2025-01-09"}); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{"a", "b", "c"} {
		if _, err := s.UpdatePlan(PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", Phase: "Core", TaskID: task, Description: strp("Task " + task)}); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(s.V.Root, "demo", "features", "orch-2025-01-09.md")
	data, _ := os.ReadFile(p)
	edited := strings.ReplaceAll(strings.Replace(string(data), "tags:", "# mine\nowner: sam # a comment\ntags:", 1), "\n", "\r\n") + "\r\n## Mine\r\n\r\nkeep  this\r\n"
	os.WriteFile(p, []byte(edited), 0o644)

	now = now.Add(time.Hour)
	if _, err := s.UpdatePlan(PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", TaskID: "b", Status: strp(session.TaskCompleted)}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	wantLine := "- [x] b · Task b · **status:** completed · **started:** 2025-01-09T11:00:00Z · **completed:** 2025-01-09T11:00:00Z ^t-2"
	want := strings.Replace(edited, "- [ ] b · Task b · **status:** pending ^t-2", wantLine, 1)
	want = strings.Replace(want, "last_active: 2025-01-09T10:00:00Z", "last_active: 2025-01-09T11:00:00Z", 1)
	if string(after) != want {
		t.Fatalf("the note changed beyond the task's line and last_active:\n%q\nwant\n%q", after, want)
	}

	// The same values again: no commit.
	head, _ := s.V.Head()
	if _, err := s.UpdatePlan(PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", TaskID: "b", Status: strp(session.TaskCompleted)}); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.V.Head(); again != head {
		t.Error("a plan update that changes nothing made a commit")
	}
}

// last_active never goes back when the clock does (timestamps are
// monotonic).
func TestFeatureLastActiveIsMonotonic(t *testing.T) {
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.FeatureNew(NewFeatureOptions{Project: "demo", Name: "Orchestrator", ID: "orch-2025-01-09"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(-time.Hour)
	out, err := s.UpdatePlan(PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", Phase: "Core", TaskID: "a", Description: strp("A")})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Feature.LastActive; got == nil || !got.Equal(time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("last_active = %v after the clock went back, want it kept at 10:00", got)
	}
}

// The features base shows properties every feature note has, each with an
// Obsidian property type; its filter selects the feature notes by folder
// and type.
func TestFeaturesBase(t *testing.T) {
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	out, err := s.FeatureNew(NewFeatureOptions{Project: "demo", Name: "Orchestrator", Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(s.V.Root, "demo", session.FeatureBase))
	if err != nil {
		t.Fatal(err)
	}
	var base struct {
		Filters struct {
			And []string `yaml:"and"`
		} `yaml:"filters"`
		Views []struct {
			Order []string `yaml:"order"`
			Sort  []struct {
				Property string `yaml:"property"`
			} `yaml:"sort"`
		} `yaml:"views"`
	}
	if err := yaml.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	if strings.Join(base.Filters.And, " ") != `file.inFolder("demo/features") type == "feature"` {
		t.Errorf("filters = %v", base.Filters.And)
	}
	props, _ := os.ReadFile(filepath.Join(s.V.Root, filepath.FromSlash(out.Feature.Note)))
	for _, v := range base.Views {
		cols := v.Order
		for _, so := range v.Sort {
			cols = append(cols, so.Property)
		}
		for _, c := range cols {
			if strings.HasPrefix(c, "file.") {
				continue
			}
			if session.PropertyTypes[c] == "" {
				t.Errorf("the base shows %q, which has no property type", c)
			}
			if !strings.Contains(string(props), "\n"+c+": ") {
				t.Errorf("the base shows %q, which a feature note lacks", c)
			}
		}
	}
}
