package features

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// writeAISession writes a's files into a new .ai-session folder and reads
// it back as ImportAISession's callers do.
func writeAISession(t testing.TB, a importer.AISession) importer.AISession {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".ai-session")
	for rel, data := range a.Files() {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	back, skipped, err := importer.ReadAISession(dir)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("reading the folder back: %v %+v", err, skipped)
	}
	return back
}

// sameFiles fails unless two .ai-session folders have the same files with
// the same bytes.
func sameFiles(t testing.TB, got, want map[string][]byte, what string) {
	t.Helper()
	var gk, wk []string
	for k := range got {
		gk = append(gk, k)
	}
	for k := range want {
		wk = append(wk, k)
	}
	sort.Strings(gk)
	sort.Strings(wk)
	if !slices.Equal(gk, wk) {
		t.Fatalf("%s: files %v, want %v", what, gk, wk)
	}
	for _, k := range wk {
		if !bytes.Equal(got[k], want[k]) {
			t.Errorf("%s: %s is\n%s\nwant\n%s", what, k, got[k], want[k])
		}
	}
}

// planVault makes a vault with two features — orch (two phases, tasks with
// agents, times and artifacts; the session's feature, with history) and
// docs (paused, an empty plan) — and history entries that belong to no
// feature.
func planVault(t testing.TB) *Service {
	t.Helper()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "exchange"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordCommand(RecordOptions{Project: "demo", Command: "before any feature"}); err != nil {
		t.Fatal(err)
	}
	newFeature(t, s, "Docs", "docs-2025-01-09")
	if _, err := s.SetFeatureStatus("demo", "docs-2025-01-09", session.FeaturePaused); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FeatureNew(NewFeatureOptions{Project: "demo", Name: "Orchestrator", ID: "orch-2025-01-09", Description: "Agents in order"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []PlanOptions{
		{Phase: "Design", TaskID: "spec", Description: strp("Write the spec"), Agent: strp("architect"), Status: strp(session.TaskCompleted), Artifacts: []string{"docs/spec.md"}},
		{Phase: "Build", PhaseID: "b", TaskID: "impl", Description: strp("Implement it"), Status: strp(session.TaskInProgress)},
		{Phase: "Build", TaskID: "test", Description: strp("Test it")},
	} {
		now = now.Add(time.Minute)
		o.Project, o.FeatureID = "demo", "orch-2025-01-09"
		if _, err := s.UpdatePlan(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []RecordOptions{
		{Command: "go test ./...", Arguments: `{"timeout":120000}`, Model: "sonnet", Agent: "Explore", TaskID: "impl", DurationMs: i64(1500)},
		{Command: "make lint", Status: session.CommandFailure, Error: "exit status 2\nline two"},
		{Command: "make lint"}, // the same command again, a second entry
		{Command: "ghost", FeatureID: "ghost-2025-01-09"},
	} {
		now = now.Add(time.Minute)
		o.Project = "demo"
		if _, err := s.RecordCommand(o); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Export reads the features and the history of each (entries with no
// feature, or a feature without a note, left out and counted); written as
// a folder and imported into another vault, it makes the same feature
// notes and a command log per feature in one commit, whose own export is
// the same folder byte for byte. Importing it again, or into the vault it
// came from, changes nothing.
func TestAISessionRoundTrip(t *testing.T) {
	t.Parallel()
	src := planVault(t)
	a, rep, err := src.ExportAISession("demo")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Features != 2 || rep.Entries != 3 || rep.Unassigned != 2 || len(rep.Problems) > 0 {
		t.Errorf("export report: %+v", rep)
	}
	if len(a.Features) != 2 || a.Features[0].ID != "docs-2025-01-09" || a.Features[0].Status != session.FeaturePaused || len(a.Features[0].History) != 0 {
		t.Fatalf("exported: %+v", a.Features)
	}
	orch := a.Features[1]
	if orch.Name != "Orchestrator" || orch.Description != "Agents in order" || len(orch.Phases) != 2 || orch.Phases[1].ID != "b" || len(orch.Phases[1].Tasks) != 2 ||
		orch.Phases[0].Tasks[0].Agent != "architect" || !slices.Equal(orch.Phases[0].Tasks[0].Artifacts, []string{"docs/spec.md"}) || orch.Phases[0].Tasks[0].CompletedAt == nil {
		t.Errorf("orch exported as %+v", orch)
	}
	if h := orch.History; len(h) != 3 || h[0].Command != "go test ./..." || h[0].TaskID != "impl" || *h[0].DurationMs != 1500 || h[1].Error != "exit status 2\nline two" || h[2].Status != session.CommandSuccess {
		t.Errorf("orch's history: %+v", h)
	}

	folder := writeAISession(t, a)
	now := time.Date(2025, 2, 1, 9, 0, 0, 0, time.UTC)
	dst := testService(t, &now)
	irep, res, err := dst.ImportAISession("demo", folder)
	if err != nil {
		t.Fatal(err)
	}
	if irep.Features != 2 || irep.Existing != 0 || irep.TasksAdded != 0 || irep.Entries != 3 || irep.Duplicates != 0 || len(irep.Skipped) != 0 || res.Commit == "" {
		t.Errorf("import report: %+v %+v", irep, res)
	}
	if got := servicetest.Subjects(t, dst.V.Root); got[0] != "import: ai-session: 2 features, 0 tasks added, 3 history entries" || len(got) != len(servicetest.Subjects(t, testService(t, &now).V.Root))+1 {
		t.Errorf("commits: %q", got)
	}
	servicetest.AssertClean(t, dst.V.Root)
	log := servicetest.ReadNote(t, dst.V.Root, "demo/sessions/import-orch-2025-01-09/commands.md")
	if !strings.Contains(log, "The command history of feature [[demo/features/orch-2025-01-09|orch-2025-01-09]], imported from an .ai-session folder.") ||
		!strings.Contains(log, "\n- 2025-01-09T10:04:00Z · success · `go test ./...` · **args:** `{\"timeout\":120000}` · **model:** sonnet · **agent:** Explore · **task:** impl · **feature:** [[demo/features/orch-2025-01-09|orch-2025-01-09]] · **duration:** 1500 ms ^h-1\n") {
		t.Errorf("the imported log:\n%s", log)
	}
	h, err := dst.CommandHistory(HistoryOptions{Project: "demo", Session: "import-orch-2025-01-09"})
	if err != nil || len(h.Entries) != 3 || h.Entries[1].Error != "exit status 2\nline two" {
		t.Errorf("the imported history reads back as %+v (%v)", h, err)
	}
	f, err := dst.Feature("demo", "orch-2025-01-09")
	if err != nil || !f.CreatedAt.Equal(*orch.CreatedAt) || !f.LastActive.Equal(*orch.LastActive) || f.Description != "Agents in order" {
		t.Errorf("imported feature: %+v (%v)", f, err)
	}
	again, _, err := dst.ExportAISession("demo")
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, again.Files(), a.Files(), "the import's export")

	for name, s := range map[string]*Service{"again": dst, "into its source": src} {
		before := servicetest.Take(t, s.V.Root)
		irep, res, err := s.ImportAISession("demo", folder)
		if err != nil || irep.Features != 0 || irep.Existing != 2 || irep.Entries != 0 || irep.Duplicates != 3 || irep.TasksAdded != 0 || len(irep.Skipped) != 0 || res.Commit != "" {
			t.Errorf("%s: %+v %+v %v", name, irep, res, err)
		}
		servicetest.AssertUnchanged(t, s.V.Root, before, "importing "+name)
	}
}

// Into a vault that has the feature already, an import adds the tasks and
// phases its plan lacks and keeps the vault's version of a task it has
// otherwise (reporting it) and the person's lines; it skips, with the
// place and the reason, a feature whose id, status or name cannot be a
// feature note, a phase or a task that cannot be written, a history entry
// that is not one; entries it already has are not added again, and new
// ones go to a log of their own.
func TestAISessionImportMerges(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	if _, err := s.UpdatePlan(PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", Phase: "Core", TaskID: "a", Description: strp("A")}); err != nil {
		t.Fatal(err)
	}
	rel := "demo/features/orch-2025-01-09.md"
	mine := servicetest.ReadNote(t, s.V.Root, rel) + "\n## Notes\n\nAsk  Sam.\n"
	servicetest.PersonCommits(t, s.V.Root, map[string]string{rel: mine})

	t0 := time.Date(2025, 1, 10, 8, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	hist := []importer.AIHistoryEntry{
		{Timestamp: at(2), Command: "second", Status: "success", Line: 2},
		{Timestamp: at(1), Command: "first", Status: "success", Model: "claude opus", Line: 1}, // out of order; the model is made an identifier
		{Timestamp: at(3), Command: "bad", Status: "ok", Line: 3},
	}
	a := importer.AISession{Features: []importer.AIFeature{
		{ID: "Bad-Feature", Status: "active"},
		{ID: "odd-2025-01-09", Status: "archived"},
		{ID: "nul-2025-01-09", Status: "active", Name: "a\x00b"},
		{ID: "orch-2025-01-09", Name: "Other name", Status: "completed", History: hist, Phases: []importer.AIPhase{
			{ID: "core", Name: "Core", Tasks: []importer.AITask{
				{TaskID: "a", Description: "A", Status: "in_progress", Line: 5},
				{TaskID: "b", Description: "B", Agent: "opus", Status: "pending", Artifacts: []string{"b.go"}, Line: 6},
				{TaskID: "c d", Description: "C", Status: "pending", Line: 7},
				{TaskID: "e", Description: "E", Status: "finished", Line: 8},
			}},
			{ID: "p 1", Name: "Bad phase"},
			{Name: "Later"},
		}},
	}}
	rep, res, err := s.ImportAISession("demo", a)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Features != 0 || rep.Existing != 1 || rep.TasksAdded != 1 || rep.Entries != 2 || rep.Duplicates != 0 || res.Commit == "" {
		t.Errorf("report: %+v", rep)
	}
	skipped := map[string]string{}
	for _, sk := range rep.Skipped {
		skipped[sk.Path] += sk.Reason + "|"
	}
	for path, want := range map[string]string{
		"Bad-Feature/":                               "is not a feature id",
		"active-features.yaml":                       `feature odd-2025-01-09: status "archived" is not one of active, paused, completed`,
		"nul-2025-01-09/implementation-plan.yaml":    "its name or description is too long or holds a NUL byte",
		"orch-2025-01-09/implementation-plan.yaml:5": "task a differs from the vault's plan of orch-2025-01-09; the vault's is kept",
		"orch-2025-01-09/implementation-plan.yaml:7": `task c d skipped: --task "c d" is not a task id`,
		"orch-2025-01-09/implementation-plan.yaml:8": `task e skipped: --status "finished" is not one of`,
		"orch-2025-01-09/implementation-plan.yaml":   `phase "p 1" ("Bad phase"): its id or name cannot be written as a section`,
		"orch-2025-01-09/history.jsonl:3":            `history entry skipped: --status "ok" is not success or failure`,
	} {
		if !strings.Contains(skipped[path], want) {
			t.Errorf("skipped %s: %q, want %q", path, skipped[path], want)
		}
	}
	if len(rep.Skipped) != 8 {
		t.Errorf("%d skipped: %+v", len(rep.Skipped), rep.Skipped)
	}
	for _, p := range []string{"demo/features/Bad-Feature.md", "demo/features/odd-2025-01-09.md", "demo/features/nul-2025-01-09.md"} {
		if _, err := os.Stat(filepath.Join(s.V.Root, p)); err == nil {
			t.Errorf("a skipped feature has a note: %s", p)
		}
	}
	after := servicetest.ReadNote(t, s.V.Root, rel)
	if !strings.HasPrefix(after, strings.TrimSuffix(mine, "\n## Notes\n\nAsk  Sam.\n")) || !strings.Contains(after, "\n## Notes\n\nAsk  Sam.\n") ||
		!strings.Contains(after, "\n- [ ] a · A · **status:** pending ^t-1\n- [ ] b · B · **agent:** opus · **status:** pending · **artifacts:** `b.go` ^t-2\n") ||
		!strings.Contains(after, "\n## Phase: Later\n\nphase_id:: later\n") || !strings.Contains(after, "\nstatus: active\n") || !strings.Contains(after, "\nname: Orchestrator\n") {
		t.Errorf("the merged note:\n%s", after)
	}
	h, err := s.CommandHistory(HistoryOptions{Project: "demo", Session: "import-orch-2025-01-09"})
	if err != nil || len(h.Entries) != 2 || h.Entries[0].Command != "first" || h.Entries[0].Model != "claude-opus" || h.Entries[1].Command != "second" || h.Entries[0].FeatureID != "orch-2025-01-09" {
		t.Errorf("imported history: %+v %v", h.Entries, err)
	}
	servicetest.AssertClean(t, s.V.Root)

	// Later the folder has one entry more: only it is imported, to a log of
	// its own; the first (twice in the folder now, once in the vault) is
	// imported once more.
	a.Features = a.Features[3:]
	a.Features[0].History = append(hist[:2:2], importer.AIHistoryEntry{Timestamp: at(4), Command: "third", Status: "failure", Error: "boom"},
		importer.AIHistoryEntry{Timestamp: at(1), Command: "first", Status: "success", Model: "claude opus"})
	rep, _, err = s.ImportAISession("demo", a)
	if err != nil || rep.Entries != 2 || rep.Duplicates != 2 || rep.TasksAdded != 0 {
		t.Errorf("the grown folder: %+v %v", rep, err)
	}
	h, err = s.CommandHistory(HistoryOptions{Project: "demo", Session: "import-orch-2025-01-09-2"})
	if err != nil || len(h.Entries) != 2 || h.Entries[0].Command != "first" || h.Entries[1].Command != "third" || h.Entries[1].Error != "boom" {
		t.Errorf("the second import's log: %+v %v", h.Entries, err)
	}
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "import: ai-session: 0 features, 0 tasks added, 2 history entries" {
		t.Errorf("commit %q", got)
	}
}

// Export reports the feature lines and log lines it cannot read, and
// leaves them out; an unknown project is refused.
func TestAISessionExportProblems(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "problems"}); err != nil {
		t.Fatal(err)
	}
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	if _, err := s.RecordCommand(RecordOptions{Project: "demo", Command: "ok"}); err != nil {
		t.Fatal(err)
	}
	rel := "demo/features/orch-2025-01-09.md"
	logRel := "demo/sessions/2025-01-09-session-01/commands.md"
	servicetest.PersonCommits(t, s.V.Root, map[string]string{
		rel:    servicetest.ReadNote(t, s.V.Root, rel) + "\n## Phase: Core\n\n- [ ] a · A · **status:** someday ^t-1\n- [ ] b · B ^t-2\n",
		logRel: servicetest.ReadNote(t, s.V.Root, logRel) + "- 2025-01-09T10:00:00Z · maybe · `x` ^h-2\n",
	})
	a, rep, err := s.ExportAISession("demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 2 || rep.Problems[0].Note != logRel || rep.Problems[1].Note != rel || rep.Entries != 1 {
		t.Errorf("problems: %+v", rep)
	}
	if tasks := a.Features[0].Phases[0].Tasks; len(tasks) != 1 || tasks[0].TaskID != "b" {
		t.Errorf("exported tasks: %+v", tasks)
	}
	if _, _, err := s.ExportAISession("nope"); err == nil {
		t.Error("exporting an unknown project succeeded")
	}
	if _, _, err := s.ImportAISession("nope", a); err == nil {
		t.Error("importing into an unknown project succeeded")
	}
}
