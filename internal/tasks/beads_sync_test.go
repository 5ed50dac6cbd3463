package tasks

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/note"
)

// skipsOf is a report's skipped issues, one "PATH: REASON" a line.
func skipsOf(rep BeadsReport) string {
	var out []string
	for _, sk := range rep.Skipped {
		out = append(out, sk.Path+": "+sk.Reason)
	}
	return strings.Join(out, "\n")
}

// moveOut takes a note out of the vault, as the skip reason tells a person
// to do to get beads' version.
func moveOut(t *testing.T, s *Service, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(s.V.Root, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

// addBlocker makes the fixture's epic bd-2 wait for bd-10 as well as bd-9.
func addBlocker(t *testing.T, jsonl []byte) []byte {
	t.Helper()
	old := []byte(`"dependencies":[{"issue_id":"bd-2","depends_on_id":"bd-9","type":"blocks"`)
	out := bytes.Replace(jsonl, old, []byte(`"dependencies":[{"issue_id":"bd-2","depends_on_id":"bd-10","type":"blocks"},{"issue_id":"bd-2","depends_on_id":"bd-9","type":"blocks"`), 1)
	if bytes.Equal(out, jsonl) {
		t.Fatal("the fixture changed: bd-2's blocker not found")
	}
	return out
}

// closeBD9 closes the fixture's bd-9, the epic bd-2's blocker.
func closeBD9(t *testing.T, jsonl []byte) []byte {
	t.Helper()
	old := []byte(`"title":"Pick a payment provider","description":"Found while looking at retries.","status":"open"`)
	out := bytes.Replace(jsonl, old, []byte(`"title":"Pick a payment provider","description":"Found while looking at retries.","status":"closed"`), 1)
	if bytes.Equal(out, jsonl) {
		t.Fatal("the fixture changed: bd-9 not found")
	}
	return out
}

// A note edited in the vault whose own line is unchanged, but whose
// ancestors' blockers changed, holds stale inherited blockers: the
// re-import treats it as an issue that changed (kept, skipped with the
// reason), not as unchanged. A blocker of an ancestor that closes changes
// nothing in the descendants' notes. Moved out of the vault, the note is
// imported again with the new inherited blockers, and the task graph's
// ready tasks are bd ready's.
func TestImportBeadsInheritedBlockersChange(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	jsonl := readFixture(t)
	importBeads(t, s, jsonl, false)

	// bd-9 closes: bd-2 and its descendants are ready; only bd-9's note
	// changes (the descendants inherit bd-9 still, now completed).
	closed := closeBD9(t, jsonl)
	if rep := importBeads(t, s, closed, false); rep.Updated != 1 || rep.Unchanged != 15 {
		t.Fatalf("closing bd-9: %+v", rep)
	}
	wantReady(t, s, closed)
	if r := readySet(t, s); !r["bd-2.1.1"] {
		t.Fatalf("bd-2.1.1 not ready once bd-9 closed: %v", sortedKeys(r))
	}

	// A person edits bd-2.1.1's note: a re-import keeps it, unchanged.
	const grandchild = "demo/tasks/bd-2_1_1.md"
	editNote(t, s, grandchild, "## Immediate context\n", "Mine.\n\n## Immediate context\n")
	edited := readNote(t, s, grandchild)
	if rep := importBeads(t, s, closed, false); rep.Unchanged != 16 {
		t.Fatalf("edited, nothing changed in beads: %+v", rep)
	}

	// The epic now waits for bd-10 too: bd-2.1.1's line is unchanged, but
	// what it inherits is not.
	blocked := addBlocker(t, closed)
	rep := importBeads(t, s, blocked, false)
	if want := "issues.jsonl:4 (bd-2.1.1): " + reasonEdited; rep.Updated != 2 || rep.Unchanged != 13 || skipsOf(rep) != want {
		t.Fatalf("bd-2 waits for bd-10: %+v\nskipped %s\nwant    %s", rep, skipsOf(rep), want)
	}
	if readNote(t, s, grandchild) != edited {
		t.Error("the edited note was not kept")
	}
	wantInherited := "inherited_blockers:\n  - '[[demo/tasks/bd-10|bd-10]]'\n  - '[[demo/tasks/bd-9|bd-9]]'\n"
	if n := readNote(t, s, "demo/tasks/bd-2_1.md"); !strings.Contains(n, wantInherited) {
		t.Errorf("bd-2.1 (not edited) lacks %q:\n%s", wantInherited, n)
	}
	// The same again: still skipped, nothing written.
	before := snapshot(t, s)
	if rep := importBeads(t, s, blocked, false); rep.Unchanged != 15 || skipsOf(rep) != "issues.jsonl:4 (bd-2.1.1): "+reasonEdited {
		t.Errorf("re-run: %+v", rep)
	}
	unchanged(t, s, before)

	// Moved out of the vault, the note comes back with what it inherits.
	moveOut(t, s, grandchild)
	if rep := importBeads(t, s, blocked, false); rep.Created != 1 || rep.Unchanged != 15 {
		t.Fatalf("after moving the note out: %+v", rep)
	}
	if n := readNote(t, s, grandchild); !strings.Contains(n, wantInherited) {
		t.Errorf("bd-2.1.1 lacks %q:\n%s", wantInherited, n)
	}
	wantReady(t, s, blocked)
	if readySet(t, s)["bd-2.1.1"] {
		t.Error("bd-2.1.1 is ready while its epic waits for bd-10")
	}
	before = snapshot(t, s)
	if rep := importBeads(t, s, blocked, false); rep.Unchanged != 16 {
		t.Errorf("idempotent: %+v", rep)
	}
	unchanged(t, s, before)
}

// beadsSumRe finds beads_sha256's value in a note.
var beadsSumRe = regexp.MustCompile(`(?m)^beads_sha256: '?"?([0-9a-f]{64})`)

// asBeforeInherited rewrites the note at rel as an import before
// inherited blockers counted in beads_sha256 wrote it: beads_sha256 the
// SHA-256 of the line alone, note_sha256 stamped anew.
func asBeforeInherited(t *testing.T, s *Service, rel, lineSum string) {
	t.Helper()
	data := []byte(readNote(t, s, rel))
	m := beadsSumRe.FindSubmatchIndex(data)
	if m == nil {
		t.Fatalf("%s has no beads_sha256:\n%s", rel, data)
	}
	copy(data[m[2]:m[3]], lineSum)
	n, err := note.Parse(rel, data)
	if err != nil {
		t.Fatal(err)
	}
	if data, err = stampNote(data, n.BodyOffset()); err != nil {
		t.Fatal(err)
	}
	writeNote(t, s, rel, string(data))
}

// A vault imported before what a note inherits counted in beads_sha256
// (which was then the SHA-256 of the line alone): a re-run changes
// nothing, whether the notes that inherit blockers were edited since or
// not, and again the next time. Once an ancestor's blockers change, the
// note nobody edited is rewritten and the edited one skipped with the
// reason.
func TestImportBeadsSumBeforeInherited(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	jsonl := readFixture(t)
	importBeads(t, s, jsonl, false)
	lineSum := map[string]string{}
	for _, is := range parseBeads(t, jsonl) {
		lineSum[is.ID] = is.SHA256
	}
	for id, rel := range map[string]string{"bd-2.1": "demo/tasks/bd-2_1.md", "bd-2.1.1": "demo/tasks/bd-2_1_1.md"} {
		if !strings.Contains(readNote(t, s, rel), "inherited_blockers:") {
			t.Fatalf("%s inherits nothing", id)
		}
		asBeforeInherited(t, s, rel, lineSum[id])
	}
	editNote(t, s, "demo/tasks/bd-2_1_1.md", "## Immediate context\n", "Mine.\n\n## Immediate context\n")
	gitOut(t, s, "add", "-A")
	gitOut(t, s, "commit", "-q", "-m", "as an earlier import wrote them, one edited since")
	edited := readNote(t, s, "demo/tasks/bd-2_1_1.md")
	unedited := readNote(t, s, "demo/tasks/bd-2_1.md")

	for run := 1; run <= 2; run++ {
		before := snapshot(t, s)
		if rep := importBeads(t, s, jsonl, false); rep.Unchanged != 16 || rep.Created+rep.Updated+len(rep.Skipped) != 0 {
			t.Fatalf("run %d over the earlier import: %+v", run, rep)
		}
		unchanged(t, s, before)
	}
	if readNote(t, s, "demo/tasks/bd-2_1.md") != unedited {
		t.Error("bd-2.1 was rewritten")
	}

	blocked := addBlocker(t, jsonl)
	rep := importBeads(t, s, blocked, false)
	if want := "issues.jsonl:4 (bd-2.1.1): " + reasonEdited; rep.Updated != 2 || skipsOf(rep) != want {
		t.Fatalf("bd-2 waits for bd-10: %+v\nskipped %s\nwant    %s", rep, skipsOf(rep), want)
	}
	if got := gitOut(t, s, "diff", "--name-only", "HEAD~1", "HEAD"); got != "demo/tasks/bd-2.md\ndemo/tasks/bd-2_1.md" {
		t.Errorf("the import changed %q", got)
	}
	if readNote(t, s, "demo/tasks/bd-2_1_1.md") != edited {
		t.Error("the edited note was not kept")
	}
}

// deferJSONL has issues deferred (defer_until) until after deferNow, no
// longer deferred, deferred to the second of deferNow, the children of
// deferred parents (an open one, a closed one), and a grandchild.
const deferJSONL = `{"id":"d-1","title":"Later","status":"open","defer_until":"2025-12-01T09:30:00.5+01:00"}
{"id":"d-2","title":"Was later","status":"open","defer_until":"2025-10-01T00:00:00Z"}
{"id":"d-3","title":"Now","status":"open","defer_until":"2025-11-01T12:00:00Z"}
{"id":"d-4","title":"Working, deferred","status":"in_progress","defer_until":"2026-01-01T00:00:00Z"}
{"id":"d-5","title":"Waits for d-1","status":"open","dependencies":[{"issue_id":"d-5","depends_on_id":"d-1","type":"blocks"}]}
{"id":"d-6","title":"Deferred, time past","status":"deferred","defer_until":"2025-10-01T00:00:00Z"}
{"id":"epic","title":"Deferred epic","status":"open","issue_type":"epic","defer_until":"2026-02-01T00:00:00Z"}
{"id":"epic.1","title":"Kid","status":"open","dependencies":[{"issue_id":"epic.1","depends_on_id":"epic","type":"parent-child"}]}
{"id":"epic.1.1","title":"Grandkid","status":"open","dependencies":[{"issue_id":"epic.1.1","depends_on_id":"epic.1","type":"parent-child"}]}
{"id":"done","title":"Closed, deferred","status":"closed","closed_at":"2025-10-02T00:00:00Z","defer_until":"2026-02-01T00:00:00Z"}
{"id":"done.1","title":"Kid of a closed deferred","status":"open","dependencies":[{"issue_id":"done.1","depends_on_id":"done","type":"parent-child"}]}
`

var deferNow = time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC)

// An issue whose defer_until is after the import's time, or whose
// parent's is, is not ready, as bd ready leaves it out: its task is
// blocked (beads_status keeps beads' status), defer_until (or
// parent_defer_until) says until when, in UTC. Once that time has passed,
// a re-import makes the tasks pending or in progress again; one whose note
// was edited in the vault since is kept and skipped with the reason.
func TestImportBeadsDeferUntil(t *testing.T) {
	t.Parallel()
	now := deferNow
	s := testService(t, &now)
	jsonl := []byte(deferJSONL)
	rep := importBeads(t, s, jsonl, false)
	if rep.Created != 11 || len(rep.Skipped)+len(rep.Warnings) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	if got, want := sortedKeys(bdReady(t, jsonl, now)), []string{"d-2", "d-3", "epic.1.1"}; !slices.Equal(got, want) {
		t.Fatalf("the reference bd ready = %v, want %v", got, want)
	}
	wantReady(t, s, jsonl)
	for rel, lines := range map[string][]string{
		"d-1":      {"status: blocked", "beads_status: open", "defer_until: 2025-12-01T08:30:00Z"},
		"d-2":      {"status: pending", "beads_status: open", "defer_until: 2025-10-01T00:00:00Z"},
		"d-3":      {"status: pending", "defer_until: 2025-11-01T12:00:00Z"},
		"d-4":      {"status: blocked", "beads_status: in_progress", "defer_until: 2026-01-01T00:00:00Z"},
		"d-6":      {"status: blocked", "beads_status: deferred", "defer_until: 2025-10-01T00:00:00Z"},
		"epic":     {"status: blocked", "defer_until: 2026-02-01T00:00:00Z"},
		"epic_1":   {"status: blocked", "beads_status: open", "parent_defer_until: 2026-02-01T00:00:00Z"},
		"epic_1_1": {"status: pending"},
		"done":     {"status: completed", "defer_until: 2026-02-01T00:00:00Z"},
		"done_1":   {"status: blocked", "parent_defer_until: 2026-02-01T00:00:00Z"},
	} {
		n := readNote(t, s, "demo/tasks/"+rel+".md")
		for _, l := range lines {
			if !strings.Contains(n, "\n"+l+"\n") {
				t.Errorf("%s lacks %q:\n%s", rel, l, n)
			}
		}
	}
	for _, rel := range []string{"d-5", "epic_1_1", "d-2"} {
		if n := readNote(t, s, "demo/tasks/"+rel+".md"); strings.Contains(n, "parent_defer_until") {
			t.Errorf("%s:\n%s", rel, n)
		}
	}
	before := snapshot(t, s)
	if rep := importBeads(t, s, jsonl, false); rep.Unchanged != 11 {
		t.Errorf("re-run: %+v", rep)
	}
	unchanged(t, s, before)

	// A person edits d-4's note; then every defer_until passes.
	editNote(t, s, "demo/tasks/d-4.md", "## Immediate context\n", "Mine.\n\n## Immediate context\n")
	now = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rep = importBeads(t, s, jsonl, false)
	if want := "issues.jsonl:4 (d-4): " + reasonEdited; rep.Updated != 4 || rep.Unchanged != 6 || skipsOf(rep) != want {
		t.Fatalf("deferrals over: %+v\nskipped %s\nwant    %s", rep, skipsOf(rep), want)
	}
	if got := gitOut(t, s, "diff", "--name-only", "HEAD~1", "HEAD"); got != "demo/tasks/d-1.md\ndemo/tasks/done_1.md\ndemo/tasks/epic.md\ndemo/tasks/epic_1.md" {
		t.Errorf("the import changed %q", got)
	}
	if n := readNote(t, s, "demo/tasks/epic_1.md"); !strings.Contains(n, "\nstatus: pending\n") || strings.Contains(n, "parent_defer_until") {
		t.Errorf("epic.1 once its parent's defer_until passed:\n%s", n)
	}
	moveOut(t, s, "demo/tasks/d-4.md")
	if rep := importBeads(t, s, jsonl, false); rep.Created != 1 || rep.Unchanged != 10 {
		t.Fatalf("d-4 moved out: %+v", rep)
	}
	if got, want := sortedKeys(bdReady(t, jsonl, now)), []string{"d-1", "d-2", "d-3", "d-4", "done.1", "epic", "epic.1", "epic.1.1"}; !slices.Equal(got, want) {
		t.Fatalf("the reference bd ready = %v, want %v", got, want)
	}
	wantReady(t, s, jsonl)
	before = snapshot(t, s)
	if rep := importBeads(t, s, jsonl, false); rep.Unchanged != 11 {
		t.Errorf("re-run: %+v", rep)
	}
	unchanged(t, s, before)
}
