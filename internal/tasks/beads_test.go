package tasks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// bdReady is the set of ids `bd ready` lists for a beads issues.jsonl at
// the time now, computed from its lines alone (as beads' ready-work query
// does, not through the importer): issues open or in progress that are not
// blocked and not deferred, where an issue is blocked when it has a
// "blocks" dependency on an issue of the file that is open, in progress,
// blocked or deferred, or when its parent (by a "parent-child" dependency,
// to any depth up to 50) is; and deferred when its defer_until is after
// now, or that of one of its parents (one "parent-child" link up, whatever
// that parent's status) is.
func bdReady(t *testing.T, jsonl []byte, now time.Time) map[string]bool {
	t.Helper()
	type dep struct {
		IssueID     string `json:"issue_id"`
		DependsOnID string `json:"depends_on_id"`
		Type        string `json:"type"`
	}
	type issue struct {
		ID         string `json:"id"`
		Status     string `json:"status"`
		DeferUntil string `json:"defer_until"`
		Deps       []dep  `json:"dependencies"`
	}
	status := map[string]string{}
	deferred := map[string]bool{}
	var all []issue
	for _, line := range bytes.Split(jsonl, []byte("\n")) {
		var is issue
		if json.Unmarshal(line, &is) != nil || is.ID == "" {
			continue
		}
		if is.Status == "" {
			is.Status = "open"
		}
		if is.DeferUntil != "" {
			at, err := time.Parse(time.RFC3339Nano, is.DeferUntil)
			if err != nil {
				t.Fatalf("%s: defer_until %q: %v", is.ID, is.DeferUntil, err)
			}
			deferred[is.ID] = at.After(now)
		}
		status[is.ID] = is.Status
		all = append(all, is)
	}
	blocking := map[string]bool{"open": true, "in_progress": true, "blocked": true, "deferred": true}
	blocked := map[string]bool{}
	children := map[string][]string{}
	var frontier []string
	for _, is := range all {
		for _, d := range is.Deps {
			switch d.Type {
			case "blocks", "":
				if st, ok := status[d.DependsOnID]; ok && blocking[st] && !blocked[is.ID] {
					blocked[is.ID] = true
					frontier = append(frontier, is.ID)
				}
			case "parent-child":
				children[d.DependsOnID] = append(children[d.DependsOnID], is.ID)
			}
		}
	}
	for depth := 0; depth < 50 && len(frontier) > 0; depth++ {
		var next []string
		for _, p := range frontier {
			for _, c := range children[p] {
				if !blocked[c] {
					blocked[c] = true
					next = append(next, c)
				}
			}
		}
		frontier = next
	}
	ready := map[string]bool{}
	for _, is := range all {
		if (is.Status == "open" || is.Status == "in_progress") && !blocked[is.ID] && !deferred[is.ID] &&
			!slices.ContainsFunc(is.Deps, func(d dep) bool { return d.Type == "parent-child" && deferred[d.DependsOnID] }) {
			ready[is.ID] = true
		}
	}
	return ready
}

// parseBeads reads jsonl as the CLI does.
func parseBeads(t *testing.T, jsonl []byte) []importer.BeadsIssue {
	t.Helper()
	issues, skipped, err := importer.ParseBeadsJSONL("issues.jsonl", bytes.NewReader(jsonl))
	if err != nil || len(skipped) > 0 {
		t.Fatalf("parse: %v, skipped %v", err, skipped)
	}
	return issues
}

func importBeads(t *testing.T, s *Service, jsonl []byte, dryRun bool) BeadsReport {
	t.Helper()
	rep, _, err := s.ImportBeads(BeadsImportOptions{Project: "demo", DryRun: dryRun}, parseBeads(t, jsonl), nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// beadsIDs maps the vault's task ids to the beads ids their notes name.
func beadsIDs(t *testing.T, s *Service) map[string]string {
	t.Helper()
	ts, err := s.Tasks("demo")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, task := range ts {
		d, err := s.ParseDoc(task.Note, []byte(readNote(t, s, task.Note)))
		if err != nil {
			t.Fatal(err)
		}
		out[task.ID] = d.Prop("beads_id")
	}
	return out
}

// readySet is the task graph's ready tasks, as beads ids.
func readySet(t *testing.T, s *Service) map[string]bool {
	t.Helper()
	g, err := s.TaskGraphOf(GraphOptions{Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	ids := beadsIDs(t, s)
	out := map[string]bool{}
	for _, id := range g.ReadyTasks {
		out[ids[id]] = true
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// wantReady fails the test unless the task graph's ready tasks are bd
// ready's for jsonl at the service clock's time.
func wantReady(t *testing.T, s *Service, jsonl []byte) {
	t.Helper()
	got, want := sortedKeys(readySet(t, s)), sortedKeys(bdReady(t, jsonl, s.NowUTC()))
	if !slices.Equal(got, want) {
		t.Errorf("task graph ready = %v\nbd ready         = %v", got, want)
	}
}

func readFixture(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "beads", "issues.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportBeads: the fixture (written from beads' format: every status,
// every dependency type, hierarchical ids, an epic with a blocker and its
// descendants, texts that are not plain Markdown) becomes one task note per
// issue in one commit: statuses mapped, priority (higher first, as the
// vault's), labels and issue_type as properties, dependencies as the graph's links, texts byte for byte; the
// task graph's ready tasks are bd ready's; a second run changes nothing.
func TestImportBeads(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	jsonl := readFixture(t)
	commits := commitCount(t, s)
	rep := importBeads(t, s, jsonl, false)
	if rep.Issues != 16 || rep.Created != 16 || len(rep.Skipped) != 0 || len(rep.Warnings) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	if n := commitCount(t, s); n != commits+1 {
		t.Fatalf("%d commits, want one more than %d", n, commits)
	}
	if got := gitOut(t, s, "log", "-1", "--format=%s"); got != "import: 16 tasks from beads issues.jsonl" {
		t.Errorf("commit subject %q", got)
	}
	if !strings.Contains(lastMessage(t, s), "Change-Type: migration") {
		t.Errorf("commit message lacks Change-Type: migration:\n%s", lastMessage(t, s))
	}
	ts, err := s.Tasks("demo")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Task{}
	for _, task := range ts {
		got[task.ID] = task
	}
	for id, want := range map[string]struct{ status, parent string }{
		"bd-1": {session.TaskCompleted, ""}, "bd-2": {session.TaskPending, ""}, "bd-2_1": {session.TaskInProgress, "bd-2"},
		"bd-2_1_1": {session.TaskPending, "bd-2_1"}, "bd-5": {session.TaskBlocked, ""}, "bd-6": {session.TaskBlocked, ""},
		"bd-8": {session.TaskArchived, ""}, "bd-13": {session.TaskBlocked, ""},
	} {
		if task := got[id]; task.Status != want.status || task.Parent != want.parent {
			t.Errorf("%s: status %q parent %q, want %q %q", id, task.Status, task.Parent, want.status, want.parent)
		}
	}
	if len(got) != 16 {
		t.Errorf("%d tasks, want 16", len(got))
	}
	one := got["bd-1"]
	if one.Name != "Set up the storage layer" || one.Priority != 3 {
		t.Errorf("bd-1 = %+v", one)
	}
	note := readNote(t, s, "demo/tasks/bd-1.md")
	for _, line := range []string{
		"source: beads", "beads_id: bd-1", "beads_status: closed", "priority: 3", "beads_priority: 1", "issue_type: task", "labels:\n  - backend\n  - storage",
		"assignee: ana", "close_reason: Done", "closed_at: 2025-10-03T15:30:00Z", "created: 2025-10-01T09:00:00Z",
		"updated: 2025-10-03T15:30:00Z", "# Set up the storage layer\n\n## Description\n\nPick SQLite.\n\nSee *why* below.\n\n## Immediate context",
	} {
		if !strings.Contains(note, line) {
			t.Errorf("bd-1's note lacks %q:\n%s", line, note)
		}
	}
	// Texts byte for byte, as Markdown or fenced.
	for id, texts := range map[string][]string{
		"bd-2":   {"## Description\n\nAll of checkout.\n", "## Approach\n\nCart, then pay.\n", "## Acceptance criteria\n\n- [ ] pays\n- [ ] refunds\n", "## Notes\n\nAsk finance.\n"},
		"bd-12":  {"````markdown\nIntro line\r\n## Not a section of the note\r\n```go\nfunc open() {\n````\n"},
		"bd-2_1": {"### ben · 2025-10-04T08:00:00Z", "```markdown\nWebhook secret is in the vault.\n\n## not a section\n```"},
	} {
		note := readNote(t, s, "demo/tasks/"+id+".md")
		for _, text := range texts {
			if !strings.Contains(note, text) {
				t.Errorf("%s's note lacks %q:\n%s", id, text, note)
			}
		}
	}
	// The texts leave the task's own sections readable.
	if task := got["bd-12"]; task.Immediate.Blockers == nil || task.ResumePrompt != "" {
		t.Errorf("bd-12 reads %+v", task)
	}
	// Dependencies: blocks in depends_on, ancestors' blockers too;
	// related and discovered-from in related_to; other types in
	// related_to and other_dependencies; external ones as text.
	for id, want := range map[string]struct{ dependsOn, related []string }{
		"bd-2":     {[]string{"bd-9"}, nil},
		"bd-2_1":   {[]string{"bd-9"}, nil},
		"bd-2_1_1": {[]string{"bd-9"}, nil},
		"bd-3":     {[]string{"bd-1"}, nil},
		"bd-9":     {nil, []string{"bd-3", "bd-4"}},
		"bd-11":    {[]string{"bd-404"}, nil},
		"bd-14":    {nil, []string{"bd-4"}},
	} {
		task := got[id]
		if !slices.Equal(task.DependsOn, session.NonNil(want.dependsOn)) || !slices.Equal(task.RelatedTo, session.NonNil(want.related)) {
			t.Errorf("%s: depends_on %v related_to %v, want %v %v", id, task.DependsOn, task.RelatedTo, want.dependsOn, want.related)
		}
	}
	for id, line := range map[string]string{
		"bd-9":     "discovered_from:\n  - '[[demo/tasks/bd-4|bd-4]]'",
		"bd-2_1":   "inherited_blockers:\n  - '[[demo/tasks/bd-9|bd-9]]'",
		"bd-2_1_1": "inherited_blockers:\n  - '[[demo/tasks/bd-9|bd-9]]'",
		"bd-11":    "external_dependencies:\n  - blocks external:billing:invoices",
		"bd-14":    "other_dependencies:\n  - waits-for bd-4",
	} {
		if note := readNote(t, s, "demo/tasks/"+id+".md"); !strings.Contains(note, line) {
			t.Errorf("%s's note lacks %q:\n%s", id, line, note)
		}
	}
	if note := readNote(t, s, "demo/tasks/bd-2.md"); strings.Contains(note, "inherited_blockers") {
		t.Errorf("bd-2 inherits nothing:\n%s", note)
	}
	want := []string{"bd-10", "bd-11", "bd-12", "bd-14", "bd-3", "bd-4", "bd-9"}
	if got := sortedKeys(bdReady(t, jsonl, s.NowUTC())); !slices.Equal(got, want) {
		t.Fatalf("the reference bd ready = %v, want %v", got, want)
	}
	wantReady(t, s, jsonl)

	// Idempotent: nothing changes, no commit.
	before := snapshot(t, s)
	rep = importBeads(t, s, jsonl, false)
	if rep.Unchanged != 16 || rep.Created+rep.Updated+len(rep.Skipped) != 0 {
		t.Errorf("second run = %+v", rep)
	}
	unchanged(t, s, before)

	// Closing the epic's blocker readies the epic and its descendants.
	closed := bytes.Replace(jsonl, []byte(`"title":"Pick a payment provider","description":"Found while looking at retries.","status":"open"`), []byte(`"title":"Pick a payment provider","description":"Found while looking at retries.","status":"closed"`), 1)
	if bytes.Equal(closed, jsonl) {
		t.Fatal("the fixture changed: bd-9 not found")
	}
	rep = importBeads(t, s, closed, false)
	if rep.Updated != 1 {
		t.Errorf("closing bd-9: %+v", rep)
	}
	wantReady(t, s, closed)
	if r := readySet(t, s); !r["bd-2"] || !r["bd-2.1"] || !r["bd-2.1.1"] {
		t.Errorf("ready after bd-9 closed: %v", sortedKeys(r))
	}
}

// A note edited in the vault since the import wrote it is kept: the issue
// is unchanged while beads' line is the same, and skipped with the reason
// once it changed. A note nobody edited is rewritten. A task note of the
// same name that is not the issue's is kept and the issue skipped. A dry
// run writes nothing.
func TestImportBeadsKeepsEdits(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "Mine", ID: "bd-13"})
	jsonl := readFixture(t)
	rep := importBeads(t, s, jsonl, false)
	if rep.Created != 15 || len(rep.Skipped) != 1 || rep.Skipped[0].Path != "issues.jsonl:15 (bd-13)" || rep.Skipped[0].Reason != reasonOther {
		t.Fatalf("report = %+v", rep)
	}
	if !strings.Contains(readNote(t, s, "demo/tasks/bd-13.md"), "name: Mine") {
		t.Error("the vault's own bd-13 was overwritten")
	}
	editNote(t, s, "demo/tasks/bd-3.md", "## Immediate context\n", "My own line.\n\n## Immediate context\n")
	edited := readNote(t, s, "demo/tasks/bd-3.md")

	rep = importBeads(t, s, jsonl, false)
	if rep.Unchanged != 15 || len(rep.Skipped) != 1 {
		t.Errorf("edited, issue unchanged: %+v", rep)
	}
	changed := bytes.ReplaceAll(jsonl, []byte(`"Fails one run in ten."`), []byte(`"Fails one run in five."`))
	changed = bytes.ReplaceAll(changed, []byte(`"title":"Retry on 502"`), []byte(`"title":"Retry on 502 and 503"`))
	before := snapshot(t, s)
	skips := func(rep BeadsReport) string {
		var out []string
		for _, sk := range rep.Skipped {
			out = append(out, sk.Path+": "+sk.Reason)
		}
		return strings.Join(out, "\n")
	}
	wantSkips := "issues.jsonl:5 (bd-3): " + reasonEdited + "\nissues.jsonl:15 (bd-13): " + reasonOther
	rep = importBeads(t, s, changed, true)
	if !rep.DryRun || rep.Updated != 1 || skips(rep) != wantSkips {
		t.Errorf("dry run = %+v", rep)
	}
	unchanged(t, s, before)
	rep = importBeads(t, s, changed, false)
	if rep.Updated != 1 || skips(rep) != wantSkips {
		t.Errorf("edited, issue changed: %+v", rep)
	}
	if readNote(t, s, "demo/tasks/bd-3.md") != edited {
		t.Error("the edited note was not kept")
	}
	if task, _ := s.Task("demo", "bd-4"); task.Name != "Retry on 502 and 503" {
		t.Errorf("bd-4 not updated: %+v", task)
	}
	if got := gitOut(t, s, "diff", "--name-only", "HEAD~1", "HEAD"); got != "demo/tasks/bd-4.md" {
		t.Errorf("the update changed %q", got)
	}
	// An agent's save is an edit too.
	if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "bd-4", Updates: TaskUpdate{Status: strp(session.TaskCompleted)}}); err != nil {
		t.Fatal(err)
	}
	changed = bytes.ReplaceAll(changed, []byte(`"title":"Retry on 502 and 503"`), []byte(`"title":"Retry"`))
	rep = importBeads(t, s, changed, false)
	if rep.Updated != 0 || len(rep.Skipped) != 3 {
		t.Errorf("after task save: %+v", rep)
	}
}

// A cycle of blocks (a file merged by hand) or one an inherited blocker
// would close (an epic waiting for its own child) is broken, with a
// warning, so that the task graph still answers.
func TestImportBeadsCycles(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	jsonl := []byte(`{"id":"a","title":"A","dependencies":[{"issue_id":"a","depends_on_id":"b","type":"blocks"}]}
{"id":"b","title":"B","dependencies":[{"issue_id":"b","depends_on_id":"a","type":"blocks"}]}
{"id":"epic","title":"E","issue_type":"epic","dependencies":[{"issue_id":"epic","depends_on_id":"kid","type":"blocks"}]}
{"id":"kid","title":"K","dependencies":[{"issue_id":"kid","depends_on_id":"epic","type":"parent-child"}]}
{"id":"x","title":"X","dependencies":[{"issue_id":"x","depends_on_id":"epic","type":"parent-child"},{"issue_id":"x","depends_on_id":"y","type":"blocks"}]}
{"id":"y","title":"Y","dependencies":[{"issue_id":"y","depends_on_id":"z","type":"parent-child"}]}
{"id":"z","title":"Z","dependencies":[{"issue_id":"z","depends_on_id":"x","type":"blocks"}]}
`)
	rep := importBeads(t, s, jsonl, false)
	if rep.Created != 7 || len(rep.Warnings) != 3 {
		t.Fatalf("report = %+v", rep)
	}
	for i, w := range []string{
		"kid inherits itself as a blocker from its ancestor epic, which waits for it",
		"b waits for a, which closes the cycle a → b → a: kept in related_to",
		"y inherits x as a blocker from an ancestor, which would close the cycle x → y → x",
	} {
		if !strings.Contains(rep.Warnings[i], w) {
			t.Errorf("warning %d = %q, want %q", i, rep.Warnings[i], w)
		}
	}
	g, err := s.TaskGraphOf(GraphOptions{Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	// kid's inherited blocker is itself: none.
	if task, _ := s.Task("demo", "kid"); len(task.DependsOn) != 0 {
		t.Errorf("kid depends on %v", task.DependsOn)
	}
	if got := strings.Join(g.ReadyTasks, ","); got != "b,kid,y" {
		t.Errorf("ready = %s", got)
	}
}

// beadsTaskIDs keeps valid ids, maps the others to valid names, and keeps
// names apart (letter case aside: the first id in byte order keeps its
// name) with a hash of the id.
func TestBeadsTaskIDs(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 120)
	got := beadsTaskIDs([]string{"bd-a1b2", "bd-a3f8.1", "bd-a3f8_1", "BD-A1B2", "proj-123", "ü", "-x", long, "bd-a3f8.1"})
	want := map[string]string{
		"BD-A1B2": "BD-A1B2", "proj-123": "proj-123", "bd-a3f8_1": "bd-a3f8_1",
		"bd-a1b2":   "bd-a1b2-" + hashedName("", "bd-a1b2")[1:],
		"bd-a3f8.1": "bd-a3f8_1-" + hashedName("", "bd-a3f8.1")[1:],
		"ü":         "x_", "-x": "x-x",
		long: strings.Repeat("x", 80) + "-" + hashedName("", long)[1:],
	}
	for id, name := range want {
		if got[id] != name {
			t.Errorf("%q → %q, want %q", id, got[id], name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d names for %d ids", len(got), len(want))
	}
	for _, name := range got {
		if err := vault.CheckName("task id", name); err != nil {
			t.Error(err)
		}
	}
}

// genBeads makes a beads issues.jsonl of n issues with a random dependency
// graph (fixed seed): epics with children (hierarchical ids "E.k" and plain
// parent-child), blocks between issues (always on an earlier issue, as
// beads keeps it acyclic), some on epics and on issues not in the file,
// related and discovered-from links, every status, labels, descriptions
// with Markdown headings, code blocks and non-ASCII text, and a defer_until
// on one issue in six and two epics in three, half of them before
// fixedClock and half after, in other zones than UTC and with fractions of a second (drawn
// from a source of their own, so the rest is what it was without them).
func genBeads(n int, seed int64) ([][]byte, int) {
	r := rand.New(rand.NewSource(seed))
	rd := rand.New(rand.NewSource(seed + 1))
	zone := time.FixedZone("CEST", 2*60*60)
	statuses := []string{"open", "open", "open", "open", "open", "open", "in_progress", "in_progress", "blocked", "deferred", "closed", "closed", "closed", "closed", "tombstone"}
	types := []string{"task", "task", "bug", "feature", "chore"}
	labels := []string{"backend", "frontend", "infra", "docs", "urgent"}
	texts := []string{"Plain text.", "Line one.\nLine two.", "## A heading of its own\n\nbody", "```sh\nmake test\n```\n", "naïve café — ünïcödé", "- [ ] step one\n- [x] step two\n", ""}
	var ids, epics []string
	children := map[string]int{}
	var lines [][]byte
	deps := 0
	base := time.Date(2025, 9, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		typ := types[r.Intn(len(types))]
		if r.Intn(10) == 0 {
			typ = "epic"
		}
		id := fmt.Sprintf("gen-%x", 0x1000+i*37)
		var ds []map[string]string
		dep := func(to, kind string) {
			ds = append(ds, map[string]string{"issue_id": id, "depends_on_id": to, "type": kind, "created_at": base.Format(time.RFC3339), "created_by": "gen"})
		}
		if len(epics) > 0 && typ != "epic" && r.Intn(4) == 0 {
			parent := epics[r.Intn(len(epics))]
			if r.Intn(2) == 0 {
				children[parent]++
				id = fmt.Sprintf("%s.%d", parent, children[parent])
			}
			dep(parent, "parent-child")
		}
		if i > 0 {
			for k := r.Intn(4); k > 0; k-- {
				dep(ids[r.Intn(len(ids))], "blocks")
			}
			if r.Intn(8) == 0 {
				dep(ids[r.Intn(len(ids))], "related")
			}
			if r.Intn(8) == 0 {
				dep(ids[r.Intn(len(ids))], "discovered-from")
			}
		}
		if r.Intn(40) == 0 {
			dep("gen-gone", "blocks")
		}
		// One dependency per target and type, as beads keeps them.
		seen := map[string]bool{}
		ds = slices.DeleteFunc(ds, func(d map[string]string) bool {
			k := d["depends_on_id"] + " " + d["type"]
			if seen[k] {
				return true
			}
			seen[k] = true
			return false
		})
		deps += len(ds)
		var ls []string
		for _, l := range labels {
			if r.Intn(4) == 0 {
				ls = append(ls, l)
			}
		}
		status := statuses[r.Intn(len(statuses))]
		created := base.Add(time.Duration(i) * time.Hour)
		is := map[string]any{
			"id": id, "title": fmt.Sprintf("Generated %s %d", typ, i), "description": texts[r.Intn(len(texts))],
			"status": status, "priority": r.Intn(5), "issue_type": typ, "labels": ls,
			"created_at": created.Format(time.RFC3339Nano), "updated_at": created.Add(time.Minute).Format(time.RFC3339Nano),
		}
		if status == "closed" {
			is["closed_at"] = created.Add(time.Hour).Format(time.RFC3339Nano)
		}
		odds := 12
		if typ == "epic" {
			odds = 3
		}
		if k := rd.Intn(odds); k < 2 {
			shift := time.Duration(1+rd.Intn(90*24)) * time.Hour
			if k == 0 {
				shift = -shift
			}
			is["defer_until"] = fixedClock.Add(shift + 250*time.Millisecond).In(zone).Format(time.RFC3339Nano)
		}
		if len(ds) > 0 {
			is["dependencies"] = ds
		}
		b, _ := json.Marshal(is)
		lines = append(lines, b)
		ids = append(ids, id)
		if typ == "epic" {
			epics = append(epics, id)
		}
	}
	return lines, deps
}

// The acceptance test: 500 generated issues with a dependency graph. Every
// issue becomes a task and every dependency an edge; the task graph's
// ready set is the one computed from the JSONL directly; a dry run writes
// nothing; a re-run changes nothing; after 3 issues change, a re-run
// changes exactly their 3 notes.
func TestImportBeadsGenerated(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	lines, ndeps := genBeads(500, 29)
	jsonl := append(bytes.Join(lines, []byte("\n")), '\n')
	if ndeps < 500 {
		t.Fatalf("only %d dependencies generated", ndeps)
	}
	// Some issues are deferred, some were and are no longer, and some of
	// the deferred ones hold back what bd ready would otherwise list.
	var past, future, heldBack, byParent int
	var undeferred [][]byte
	deferredNow := map[string]bool{}
	for _, l := range lines {
		var is struct {
			ID         string    `json:"id"`
			DeferUntil time.Time `json:"defer_until"`
		}
		if err := json.Unmarshal(l, &is); err != nil {
			t.Fatal(err)
		}
		switch {
		case is.DeferUntil.IsZero():
		case is.DeferUntil.After(now):
			future++
			deferredNow[is.ID] = true
		default:
			past++
		}
		undeferred = append(undeferred, regexp.MustCompile(`,"defer_until":"[^"]*"`).ReplaceAll(l, nil))
	}
	ready := bdReady(t, jsonl, now)
	for id := range bdReady(t, bytes.Join(undeferred, []byte("\n")), now) {
		if !ready[id] {
			heldBack++
			if !deferredNow[id] {
				byParent++
			}
		}
	}
	if past < 20 || future < 20 || heldBack < 5 || byParent < 1 {
		t.Fatalf("defer_until: %d past, %d future, %d issues held back (%d by a parent)", past, future, heldBack, byParent)
	}

	before := snapshot(t, s)
	rep := importBeads(t, s, jsonl, true)
	if rep.Created != 500 || !rep.DryRun || len(rep.Notes) != 500 {
		t.Fatalf("dry run = %+v", rep)
	}
	unchanged(t, s, before)
	if _, err := os.Stat(filepath.Join(s.V.Root, "demo", "tasks")); !os.IsNotExist(err) {
		t.Fatalf("the dry run made the tasks folder (%v)", err)
	}

	start := time.Now()
	rep = importBeads(t, s, jsonl, false)
	t.Logf("500 issues imported in %v", time.Since(start))
	if rep.Created != 500 || len(rep.Skipped) != 0 || len(rep.Warnings) != 0 {
		t.Fatalf("import = %+v", rep)
	}
	if n := strings.Count(gitOut(t, s, "show", "--name-only", "--format=", "HEAD"), "demo/tasks/"); n != 500 {
		t.Errorf("the import's commit holds %d task notes", n)
	}

	// Every issue a task.
	ids := beadsIDs(t, s)
	task := map[string]string{} // beads id → task id
	for tid, bid := range ids {
		task[bid] = tid
	}
	issues := parseBeads(t, jsonl)
	if len(ids) != 500 || len(task) != 500 {
		t.Fatalf("%d tasks for %d beads ids", len(ids), len(task))
	}
	// Every dependency an edge (on an issue of the file).
	g, err := s.TaskGraphOf(GraphOptions{Project: "demo", IncludeCompleted: true})
	if err != nil {
		t.Fatal(err)
	}
	edges := map[string]bool{}
	for _, e := range g.Edges {
		edges[e.From+" "+e.Type+" "+e.To] = true
	}
	kind := map[string]string{"blocks": "depends_on", "parent-child": "child_of", "related": "related_to", "discovered-from": "related_to"}
	checked := 0
	for _, is := range issues {
		for _, d := range is.Dependencies {
			to, ok := task[d.DependsOnID]
			if !ok {
				continue // gen-gone
			}
			checked++
			if e := task[is.ID] + " " + kind[d.Type] + " " + to; !edges[e] {
				t.Errorf("dependency %s -%s-> %s is no edge %q", is.ID, d.Type, d.DependsOnID, e)
			}
		}
	}
	if checked < 450 {
		t.Errorf("only %d dependencies checked", checked)
	}
	wantReady(t, s, jsonl)
	if r := readySet(t, s); len(r) < 50 || len(r) > 400 {
		t.Errorf("%d ready: the generated graph does not exercise readiness", len(r))
	}

	// A re-run changes nothing.
	before = snapshot(t, s)
	if rep := importBeads(t, s, jsonl, false); rep.Unchanged != 500 {
		t.Errorf("re-run = %+v", rep)
	}
	unchanged(t, s, before)

	// Change 3 issues: a title, a status (closing an open issue that
	// blocks others), the labels.
	var blocker string
	for _, is := range issues {
		for _, d := range is.Dependencies {
			if d.Type == "blocks" && blocker == "" {
				for _, b := range issues {
					if b.ID == d.DependsOnID && b.Status == "open" && !strings.Contains(b.ID, ".") {
						blocker = b.ID
					}
				}
			}
		}
	}
	edit := func(id, old, new string) {
		for i, l := range lines {
			if bytes.Contains(l, []byte(`"id":"`+id+`"`)) {
				if !bytes.Contains(l, []byte(old)) {
					t.Fatalf("%s's line lacks %s: %s", id, old, l)
				}
				lines[i] = bytes.Replace(l, []byte(old), []byte(new), 1)
				return
			}
		}
		t.Fatalf("no line for %s", id)
	}
	if blocker == "" || blocker == issues[10].ID || blocker == issues[300].ID {
		t.Fatalf("no blocker to close apart from the issues renamed and relabelled (%q)", blocker)
	}
	edit(issues[10].ID, `"title":"Generated`, `"title":"Renamed`)
	edit(blocker, `"status":"open"`, `"status":"closed"`)
	edit(issues[300].ID, `"labels":`, `"labels":["relabelled"],"x":`)
	changed := append(bytes.Join(lines, []byte("\n")), '\n')
	rep = importBeads(t, s, changed, false)
	if rep.Updated != 3 || rep.Unchanged != 497 {
		t.Errorf("after 3 changes = %+v", rep)
	}
	diff := strings.Split(gitOut(t, s, "diff", "--name-only", "HEAD~1", "HEAD"), "\n")
	want := []string{session.TaskPath("demo", task[issues[10].ID]), session.TaskPath("demo", task[blocker]), session.TaskPath("demo", task[issues[300].ID])}
	sort.Strings(diff)
	sort.Strings(want)
	if !slices.Equal(diff, want) {
		t.Errorf("the re-run changed %v, want %v", diff, want)
	}
	wantReady(t, s, changed)
	if readySet(t, s)[blocker] {
		t.Errorf("closed %s is ready", blocker)
	}
}

// A note that no longer parses is kept as it is, and its issue skipped with
// the reason; the other issues are imported.
func TestImportBeadsBrokenNote(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	jsonl := readFixture(t)
	importBeads(t, s, jsonl, false)
	broken := "---\nstatus: [unclosed\n---\n# mine\n"
	writeNote(t, s, "demo/tasks/bd-5.md", broken)
	changed := bytes.ReplaceAll(jsonl, []byte(`"title":"Vendor answer"`), []byte(`"title":"Vendor answered"`))
	rep, _, err := s.ImportBeads(BeadsImportOptions{Project: "demo"}, parseBeads(t, changed), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unchanged != 15 || len(rep.Skipped) != 1 || rep.Skipped[0].Path != "issues.jsonl:7 (bd-5)" || rep.Skipped[0].Reason != reasonNoParse {
		t.Errorf("report = %+v", rep)
	}
	if readNote(t, s, "demo/tasks/bd-5.md") != broken {
		t.Error("the broken note was rewritten")
	}
}

// The import's properties are written in one edit; the notes are byte for
// byte those written one property at a time (note.Set), which a vault
// whose task template has other front matter gets (the fixture's issues,
// and deferred ones).
func TestBeadsNoteOneEdit(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	issues := parseBeads(t, readFixture(t))
	plans, _ := planBeads(issues, fixedClock)
	deferred := parseBeads(t, []byte(deferJSONL))
	more, _ := planBeads(deferred, deferNow)
	issues, plans = append(issues, deferred...), append(plans, more...)
	for i, is := range issues {
		var used bool
		fast, err := s.renderBeadsNoteWith("demo", is, plans[i], func(rel string, data []byte, props []beadsProp) (*note.Note, bool) {
			n, ok := appendProps(rel, data, props)
			used = ok
			return n, ok
		})
		if err != nil || !used {
			t.Fatalf("%s: one edit not used (%v)", is.ID, err)
		}
		slow, err := s.renderBeadsNoteWith("demo", is, plans[i], func(string, []byte, []beadsProp) (*note.Note, bool) { return nil, false })
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fast, slow) {
			t.Errorf("%s: one edit\n%s\none at a time\n%s", is.ID, fast, slow)
		}
	}
}
