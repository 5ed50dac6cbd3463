package tasks

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

// TestTaskNewWritesTheNoteInOneCommit: task new writes the task note with
// its relationships as wikilinks, its key files as a property and a
// section, and commits it alone with the trailers naming the task; the
// task read back is the one returned, at version 1.
func TestTaskNewWritesTheNoteInOneCommit(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	newTask(t, s, NewTaskOptions{Name: "Lexer"})
	newTask(t, s, NewTaskOptions{Name: "Docs"})
	before := commitCount(t, s)
	out, err := s.TaskNew(NewTaskOptions{Project: "demo", Name: "Parser work", Priority: 2, KeyFiles: []string{"src/parse.go", "src/ast.go"},
		DependsOn: []string{"lexer"}, Blocks: []string{"docs"}, RelatedTo: []string{"lexer"}, Parent: "docs"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Task.ID != "parser-work" || out.Version != 1 || out.Result.Commit == "" {
		t.Fatalf("outcome = %+v", out)
	}
	if got := commitCount(t, s); got != before+1 {
		t.Fatalf("%d commits after task new, want %d", got, before+1)
	}
	if files := gitOut(t, s, "show", "--name-only", "--format=", "HEAD"); files != "demo/tasks/parser-work.md" {
		t.Fatalf("the commit holds %q", files)
	}
	msg := lastMessage(t, s)
	for _, want := range []string{"task-new: parser-work Parser work", "Task: parser-work", "Change-Type: manual"} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	text := readNote(t, s, "demo/tasks/parser-work.md")
	for _, want := range []string{
		"task_id: parser-work\n", "name: Parser work\n", "status: pending\n", "priority: 2\n",
		"depends_on:\n  - '[[demo/tasks/lexer|lexer]]'\n", "blocks:\n  - '[[demo/tasks/docs|docs]]'\n",
		"related_to:\n  - '[[demo/tasks/lexer|lexer]]'\n", "parent: '[[demo/tasks/docs|docs]]'\n",
		"created: 2026-03-02T09:00:00Z\n", "# Parser work\n", "## Key files\n\n- `src/parse.go`\n- `src/ast.go`\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the note lacks %q:\n%s", want, text)
		}
	}
	got, err := s.Task("demo", "parser-work")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Parser work" || got.Priority != 2 || got.Parent != "docs" || !slices.Equal(got.DependsOn, []string{"lexer"}) ||
		!slices.Equal(got.Blocks, []string{"docs"}) || !slices.Equal(got.KeyFiles, []string{"src/parse.go", "src/ast.go"}) {
		t.Fatalf("task read back = %+v", got)
	}
}

// TestTaskNewIDs: the id is the name's slug, made unique with -2, -3; an
// id given is used as it is, and one that exists already, or is no plain
// name, is refused.
func TestTaskNewIDs(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	for _, c := range []struct {
		name, id string
		want     string
		code     errs.Code
	}{
		{name: "Parser work", want: "parser-work"},
		{name: "Parser  WORK!", want: "parser-work-2"},
		{name: "parser work", want: "parser-work-3"},
		{name: "Anything", id: "custom_1", want: "custom_1"},
		{name: "Again", id: "custom_1", code: errs.UpdateValidationFailed},
		{name: "Escape", id: "../escape", code: errs.PathOutsideVault},
	} {
		out, err := s.TaskNew(NewTaskOptions{Project: "demo", Name: c.name, ID: c.id})
		if c.want != "" {
			if err != nil || out.Task.ID != c.want {
				t.Errorf("task new %q (id %q) = %q, %v; want %q", c.name, c.id, out.Task.ID, err, c.want)
			}
			continue
		}
		if !hasCode(err, c.code) {
			t.Errorf("task new %q (id %q): error %v, want %s", c.name, c.id, err, c.code.Name)
		}
	}
	tasks, err := s.Tasks("demo")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range tasks {
		ids = append(ids, x.ID)
	}
	if want := []string{"custom_1", "parser-work", "parser-work-2", "parser-work-3"}; !slices.Equal(ids, want) {
		t.Fatalf("task list = %v, want %v (sorted by id)", ids, want)
	}
}

// TestTaskNewRefusals: a task new with a bad name, a bad key file, a
// relationship to a task that does not exist, or one that would close a
// cycle of depends_on/blocks is refused with its code, and the vault is
// left as it was.
func TestTaskNewRefusals(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "A"})
	newTask(t, s, NewTaskOptions{Name: "B", DependsOn: []string{"a"}})
	before := snapshot(t, s)
	for _, c := range []struct {
		what string
		o    NewTaskOptions
		code errs.Code
	}{
		{"an empty name", NewTaskOptions{Name: "  "}, errs.UpdateValidationFailed},
		{"a name of 201 characters", NewTaskOptions{Name: strings.Repeat("n", 201)}, errs.UpdateValidationFailed},
		{"a key file with a backquote", NewTaskOptions{Name: "X", KeyFiles: []string{"a`b"}}, errs.UpdateValidationFailed},
		{"an empty key file", NewTaskOptions{Name: "X", KeyFiles: []string{" "}}, errs.UpdateValidationFailed},
		{"depends on a missing task", NewTaskOptions{Name: "X", DependsOn: []string{"nowhere"}}, errs.TaskNotFound},
		{"blocks a missing task", NewTaskOptions{Name: "X", Blocks: []string{"nowhere"}}, errs.TaskNotFound},
		{"related to a missing task", NewTaskOptions{Name: "X", RelatedTo: []string{"nowhere"}}, errs.TaskNotFound},
		{"a missing parent", NewTaskOptions{Name: "X", Parent: "nowhere"}, errs.TaskNotFound},
		{"a relationship that is a path", NewTaskOptions{Name: "X", DependsOn: []string{"../a"}}, errs.TaskNotFound},
		{"depends on a and blocks it", NewTaskOptions{Name: "X", DependsOn: []string{"a"}, Blocks: []string{"a"}}, errs.TaskGraphCycle},
		{"blocks a, which b waits on, and depends on b", NewTaskOptions{Name: "X", DependsOn: []string{"b"}, Blocks: []string{"a"}}, errs.TaskGraphCycle},
		{"a project that does not exist", NewTaskOptions{Project: "nope", Name: "X"}, errs.ProjectNotFound},
	} {
		if c.o.Project == "" {
			c.o.Project = "demo"
		}
		_, err := s.TaskNew(c.o)
		if !hasCode(err, c.code) {
			t.Errorf("%s: error %v, want %s", c.what, err, c.code.Name)
		}
	}
	unchanged(t, s, before)
}

// TestTaskReadAndList: a task that has no note, or an id that is no plain
// name, is TaskNotFound; a project without a tasks folder lists none.
func TestTaskReadAndList(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	tasks, err := s.Tasks("demo")
	if err != nil || len(tasks) != 0 {
		t.Fatalf("tasks of a new project = %v, %v", tasks, err)
	}
	for _, id := range []string{"missing", "../demo/session-current-state", ""} {
		if _, err := s.Task("demo", id); !hasCode(err, errs.TaskNotFound) {
			t.Errorf("task %q: error %v, want TASK_NOT_FOUND", id, err)
		}
	}
	if _, err := s.Tasks("nope"); !hasCode(err, errs.ProjectNotFound) {
		t.Errorf("tasks of a missing project: %v", err)
	}
}

// TestSaveTaskChangesTheFieldsGiven: a save writes the fields given — and
// only those — into the note's properties and sections, in one commit whose
// trailers name the task and the change type; each save is the next
// version; a person's own line in a rewritten section stays.
func TestSaveTaskChangesTheFieldsGiven(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	id := newTask(t, s, NewTaskOptions{Name: "Parser", KeyFiles: []string{"old.go"}, Priority: 1})
	rel := session.TaskPath("demo", id)
	editNote(t, s, rel, "## Technical decisions\n\n_None yet._\n", "## Technical decisions\n\n_None yet._\nAsk Sam first.\n")

	now = now.Add(time.Hour)
	score := 0.75
	out, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, ChangeType: "auto_save", ChangeSummary: "design done", Updates: TaskUpdate{
		Phase: strp("design"), Iteration: intp(3), Score: &score, Status: strp(session.TaskInProgress),
		Immediate:          &ImmediateContext{WorkingOn: "the grammar", LastAction: "read the spec", NextStep: "write rules", Blockers: []string{"CI red", "no review"}, Notes: "n1"},
		KeyFiles:           []string{"src/parse.go", "src/lex.go"},
		TechnicalDecisions: []string{"PEG over LALR"},
		ResumePrompt:       strp("Continue with\r\nthe rules.\n"),
		LockedElements:     []string{"func Parse"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.PersonCommit == "" {
		t.Errorf("the person's edit was not committed first: %+v", out.Result)
	}
	if out.Version != 3 { // task new, the person's edit, this save
		t.Errorf("version = %d, want 3", out.Version)
	}
	msg := lastMessage(t, s)
	for _, want := range []string{"task-save: parser: design done", "Task: parser", "Change-Type: auto_save", "Duration-Ms: "} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	got, err := s.Task("demo", id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Phase != "design" || got.Iteration != 3 || got.Score == nil || *got.Score != 0.75 || got.Status != session.TaskInProgress ||
		got.Priority != 1 || got.Name != "Parser" || got.ResumePrompt != "Continue with\nthe rules." ||
		!slices.Equal(got.KeyFiles, []string{"src/parse.go", "src/lex.go"}) || !slices.Equal(got.TechnicalDecisions, []string{"PEG over LALR"}) ||
		!slices.Equal(got.LockedElements, []string{"func Parse"}) || got.Immediate.WorkingOn != "the grammar" ||
		!slices.Equal(got.Immediate.Blockers, []string{"CI red", "no review"}) || got.Immediate.Notes != "n1" {
		t.Fatalf("task after save = %+v", got)
	}
	text := readNote(t, s, rel)
	for _, want := range []string{"- **Blockers:** CI red; no review\n", "- **Notes:** n1\n", "- `src/parse.go`\n- `src/lex.go`\n",
		"- PEG over LALR\nAsk Sam first.\n", "updated: 2026-03-02T10:00:00Z\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the note lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "old.go") || strings.Contains(text, "_None yet._") {
		t.Errorf("the replaced key file or placeholder is still there:\n%s", text)
	}

	// A second save of one field: the rest stays; empty lists clear.
	out, err = s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Name: strp("Parser v2"), SetKeyFiles: true, SetDecisions: true, SetLocked: true}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Version != 4 || out.Task.Name != "Parser v2" || out.Task.Phase != "design" || len(out.Task.KeyFiles) != 0 ||
		len(out.Task.TechnicalDecisions) != 0 || len(out.Task.LockedElements) != 0 {
		t.Fatalf("second save = version %d, %+v", out.Version, out.Task)
	}
	if !strings.Contains(lastMessage(t, s), "task-save: parser: context saved") {
		t.Errorf("default summary missing:\n%s", lastMessage(t, s))
	}
	if text := readNote(t, s, rel); !strings.Contains(text, "## Technical decisions\n\n_None yet._\nAsk Sam first.\n") {
		t.Errorf("cleared decisions:\n%s", text)
	}
}

// TestSaveTaskRefusals: a save with a value out of its range, an unknown
// change type or a missing task is refused with its code and changes
// nothing.
func TestSaveTaskRefusals(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	id := newTask(t, s, NewTaskOptions{Name: "Parser"})
	before := snapshot(t, s)
	neg, big := -1.0, 2e9
	for _, c := range []struct {
		what string
		o    SaveTaskOptions
		code errs.Code
	}{
		{"status done", SaveTaskOptions{Updates: TaskUpdate{Status: strp("done")}}, errs.UpdateValidationFailed},
		{"a negative iteration", SaveTaskOptions{Updates: TaskUpdate{Iteration: intp(-1)}}, errs.UpdateValidationFailed},
		{"a negative score", SaveTaskOptions{Updates: TaskUpdate{Score: &neg}}, errs.UpdateValidationFailed},
		{"a score too large", SaveTaskOptions{Updates: TaskUpdate{Score: &big}}, errs.UpdateValidationFailed},
		{"an empty name", SaveTaskOptions{Updates: TaskUpdate{Name: strp("")}}, errs.UpdateValidationFailed},
		{"a phase of 501 characters", SaveTaskOptions{Updates: TaskUpdate{Phase: strp(strings.Repeat("p", 501))}}, errs.UpdateValidationFailed},
		{"a resume prompt over 16 KiB", SaveTaskOptions{Updates: TaskUpdate{ResumePrompt: strp(strings.Repeat("r", 16<<10+1))}}, errs.UpdateValidationFailed},
		{"a locked element with a line break", SaveTaskOptions{Updates: TaskUpdate{LockedElements: []string{"a\nb"}}}, errs.UpdateValidationFailed},
		{"change type unknown", SaveTaskOptions{ChangeType: "sometimes"}, errs.UpdateValidationFailed},
		{"a summary with a NUL", SaveTaskOptions{ChangeSummary: "a\x00b"}, errs.UpdateValidationFailed},
		{"a missing task", SaveTaskOptions{TaskID: "nowhere"}, errs.TaskNotFound},
		{"a task id that is a path", SaveTaskOptions{TaskID: "../x"}, errs.TaskNotFound},
	} {
		c.o.Project = "demo"
		if c.o.TaskID == "" {
			c.o.TaskID = id
		}
		if _, err := s.SaveTask(c.o); !hasCode(err, c.code) {
			t.Errorf("%s: error %v, want %s", c.what, err, c.code.Name)
		}
	}
	// An empty phase clears it, and is no error.
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Phase: strp("")}}); err != nil {
		t.Fatalf("an empty phase: %v", err)
	}
	before.head = head(t, s)
	unchanged(t, s, before)
}

// TestTaskVersions: task versions lists every commit that changed the
// note, oldest first, with its change type and summary, the newest max
// when max is given; a commit made by hand counts as a manual version.
func TestTaskVersions(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	id := newTask(t, s, NewTaskOptions{Name: "Parser"})
	for _, c := range []struct{ summary, typ string }{{"first", "auto_save"}, {"second", "checkpoint"}} {
		if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, ChangeSummary: c.summary, ChangeType: c.typ, Updates: TaskUpdate{Phase: strp(c.summary)}}); err != nil {
			t.Fatal(err)
		}
	}
	rel := session.TaskPath("demo", id)
	editNote(t, s, rel, "priority: 0", "priority: 5")
	gitOut(t, s, "commit", "-q", "-m", "by hand", "--", rel)

	vs, err := s.TaskVersions("demo", id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, v := range vs {
		if v.Version != i+1 || len(v.Commit) != 40 || v.CreatedAt.IsZero() {
			t.Errorf("version %d = %+v", i+1, v)
		}
		got = append(got, v.ChangeType+" "+v.ChangeSummary)
	}
	// A save's summary comes back as its commit subject says it: after the
	// operation, the task id and the summary given.
	want := []string{"manual parser Parser", "auto_save parser: first", "checkpoint parser: second", "manual by hand"}
	if !slices.Equal(got, want) {
		t.Fatalf("versions = %q, want %q", got, want)
	}
	if vs[3].Commit != head(t, s) {
		t.Errorf("the last version is %s, HEAD is %s", vs[3].Commit, head(t, s))
	}
	last2, err := s.TaskVersions("demo", id, 2)
	if err != nil || len(last2) != 2 || last2[0].Version != 3 || last2[1].Version != 4 {
		t.Fatalf("the newest 2 = %+v, %v", last2, err)
	}
	// The next save counts the commit made by hand too.
	out, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Iteration: intp(1)}})
	if err != nil || out.Version != 5 {
		t.Fatalf("save after a commit by hand: version %d, %v; want 5", out.Version, err)
	}
	if _, err := s.TaskVersions("demo", "nowhere", 0); !hasCode(err, errs.TaskNotFound) {
		t.Fatalf("versions of a missing task: %v", err)
	}
}

// TestUnifiedContext: the unified context holds the global context, and
// with a task the task, its relationships with the inverse ones derived
// (blocked_by, related_to named from the other side), its newest versions
// and its unresolved conflicts.
func TestUnifiedContext(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	newTask(t, s, NewTaskOptions{Name: "Lexer", KeyFiles: []string{"lex.go"}})
	newTask(t, s, NewTaskOptions{Name: "Parser", DependsOn: []string{"lexer"}, KeyFiles: []string{"lex.go"}})
	newTask(t, s, NewTaskOptions{Name: "Spec", Blocks: []string{"parser"}, RelatedTo: []string{"parser"}})
	newTask(t, s, NewTaskOptions{Name: "Docs", RelatedTo: []string{"parser"}})
	for i := 0; i < 3; i++ {
		if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "parser", ChangeSummary: "step " + string(rune('a'+i)), Updates: TaskUpdate{Iteration: intp(i + 1)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DetectConflicts("demo", nil, []string{ConflictFile}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SwitchTask(SwitchOptions{Project: "demo", To: "parser"}); err != nil {
		t.Fatal(err)
	}

	g, err := s.UnifiedContext(UnifiedOptions{Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if g.ProjectID != "demo" || g.Task != nil || g.Relationships != nil || g.Global.ActiveTask != "parser" || g.Metadata.Source != "vault" {
		t.Fatalf("global only = %+v", g)
	}

	uc, err := s.UnifiedContext(UnifiedOptions{Project: "demo", TaskID: "parser", IncludeVersionHistory: true, MaxVersions: 2})
	if err != nil {
		t.Fatal(err)
	}
	if uc.Task == nil || uc.Task.ID != "parser" || uc.Task.Iteration != 3 {
		t.Fatalf("task = %+v", uc.Task)
	}
	ids := func(rs []TaskRef) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.TaskID+":"+r.Status)
		}
		return strings.Join(out, ",")
	}
	r := uc.Relationships
	if r == nil || ids(r.DependsOn) != "lexer:pending" || ids(r.BlockedBy) != "spec:pending" || ids(r.Blocks) != "" ||
		ids(r.RelatedTo) != "docs:pending,spec:pending" {
		t.Fatalf("relationships = %+v", r)
	}
	if len(uc.VersionHistory) != 2 || uc.VersionHistory[1].ChangeSummary != "to parser" || uc.VersionHistory[0].ChangeSummary != "parser: step c" {
		t.Fatalf("version history = %+v", uc.VersionHistory)
	}
	if len(uc.Conflicts) != 1 || uc.Conflicts[0].ID != "cf-1" || uc.Conflicts[0].Type != ConflictFile {
		t.Fatalf("conflicts = %+v", uc.Conflicts)
	}

	// Without relationships nor history; the default of 5 versions.
	uc, err = s.UnifiedContext(UnifiedOptions{Project: "demo", TaskID: "parser", NoRelationships: true})
	if err != nil || uc.Relationships != nil || uc.VersionHistory != nil {
		t.Fatalf("no relationships = %+v, %v", uc, err)
	}
	uc, err = s.UnifiedContext(UnifiedOptions{Project: "demo", TaskID: "parser", IncludeVersionHistory: true})
	if err != nil || len(uc.VersionHistory) != 5 {
		t.Fatalf("default versions = %d, %v", len(uc.VersionHistory), err)
	}
	if _, err := s.UnifiedContext(UnifiedOptions{Project: "demo", TaskID: "nowhere"}); !hasCode(err, errs.TaskNotFound) {
		t.Fatalf("missing task: %v", err)
	}
}

func intp(n int) *int { return &n }

// TestWithOpRunsAnOperationOnce: an operation retried under the same
// operation id (a reply lost, the command run again) does not take effect
// twice: one task note, one commit; another id is another operation.
func TestWithOpRunsAnOperationOnce(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	before := commitCount(t, s)
	for i := 0; i < 2; i++ {
		if _, err := s.WithOp("op-new-parser").TaskNew(NewTaskOptions{Project: "demo", Name: "Parser"}); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	tasks, err := s.Tasks("demo")
	if err != nil || len(tasks) != 1 || tasks[0].ID != "parser" || commitCount(t, s) != before+1 {
		t.Fatalf("after a retried task new: %+v, %v, %d commits (was %d)", tasks, err, commitCount(t, s), before)
	}
	if !strings.Contains(lastMessage(t, s), "Op-Id: op-new-parser") {
		t.Errorf("commit message:\n%s", lastMessage(t, s))
	}
	if _, err := s.WithOp("op-other").TaskNew(NewTaskOptions{Project: "demo", Name: "Parser"}); err != nil {
		t.Fatal(err)
	}
	if tasks, _ := s.Tasks("demo"); len(tasks) != 2 {
		t.Fatalf("another op id made %d tasks, want 2", len(tasks))
	}
}

// TestGlobalContextReadsThePersonsLists: the global context's hard rules,
// tech stack, key paths and services are the bullets a person writes in
// global-context.md; a project without the note has empty lists.
func TestGlobalContextReadsThePersonsLists(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	g, err := s.Global("demo")
	if err != nil || len(g.HardRules)+len(g.TechStack)+len(g.KeyPaths)+len(g.Services) != 0 || g.ActiveTask != "" || g.HardRules == nil {
		t.Fatalf("global context without the note = %+v, %v", g, err)
	}
	newTask(t, s, NewTaskOptions{Name: "Parser"})
	if _, err := s.SwitchTask(SwitchOptions{Project: "demo", To: "parser"}); err != nil {
		t.Fatal(err)
	}
	rel := "demo/" + session.GlobalContextNote
	editNote(t, s, rel, "## Hard rules\n", "## Hard rules\n\n- Never push to main\n- Tests first\n")
	editNote(t, s, rel, "## Tech stack\n", "## Tech stack\n\n- Go 1.26\n")
	editNote(t, s, rel, "## Key paths\n", "## Key paths\n\n- **cli**: `internal/cli`\n- docs\n")
	editNote(t, s, rel, "## Services\n", "## Services\n\n- db: postgres://localhost\n")
	uc, err := s.UnifiedContext(UnifiedOptions{Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	g = uc.Global
	if !slices.Equal(g.HardRules, []string{"Never push to main", "Tests first"}) || !slices.Equal(g.TechStack, []string{"Go 1.26"}) ||
		g.KeyPaths["cli"] != "internal/cli" || g.KeyPaths["docs"] != "" || len(g.KeyPaths) != 2 || g.Services["db"] != "postgres://localhost" || g.ActiveTask != "parser" {
		t.Fatalf("global context = %+v", g)
	}
}

// TestTaskNotesAsAPersonEditsThem: a key file a person adds to the
// section, with or without backquotes, counts as the task's; files in the
// tasks folder that are not notes are no tasks.
func TestTaskNotesAsAPersonEditsThem(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "Parser", KeyFiles: []string{"parse.go"}})
	editNote(t, s, "demo/tasks/parser.md", "- `parse.go`\n", "- `parse.go`\n- lex.go\n- `ast.go`\n")
	writeNote(t, s, "demo/tasks/README.txt", "not a task\n")
	task, err := s.Task("demo", "parser")
	if err != nil || !slices.Equal(task.KeyFiles, []string{"parse.go", "lex.go", "ast.go"}) {
		t.Fatalf("key files = %v, %v", task.KeyFiles, err)
	}
	// A new task that depends on it reads the folder: the stray file is no task.
	if _, err := s.TaskNew(NewTaskOptions{Project: "demo", Name: "Codegen", DependsOn: []string{"parser"}}); err != nil {
		t.Fatal(err)
	}
	tasks, err := s.Tasks("demo")
	if err != nil || len(tasks) != 2 {
		t.Fatalf("tasks = %+v, %v", tasks, err)
	}
	if recorded, err := s.Conflicts("demo"); err != nil || len(recorded) != 0 {
		t.Fatalf("conflicts before any detection = %+v, %v", recorded, err)
	}
	if _, err := s.Conflicts("nope"); !hasCode(err, errs.ProjectNotFound) {
		t.Fatalf("conflicts of a missing project: %v", err)
	}
}
